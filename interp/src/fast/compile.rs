//! Compilation of the core form to a flat, register-based bytecode.
//!
//! Every thread-local variable, constant, parameter, builtin and expression temporary is a
//! register (a `u64` slot, see [`super::repr`]). Structured control flow becomes jumps, so a
//! thread's continuation is a single program counter; its saved state between barrier
//! intervals is `[pc, var 0, var 1, ...]`.
//!
//! Step accounting (one step per `Assign`, `Store`, `Atomic`, `if` and `while` condition
//! evaluation).
//! The thread's step counter is advanced by control-flow instructions only: a conditional
//! jump of an `if`/`while` adds, per edge, the statements of the run before it, itself, and
//! the straight-line statements at the start of the block it enters (counted ahead); other
//! runs are added by the jump, barrier or halt that ends them. Each site (an array access or
//! a faulting operator) records `pre`, the signed offset such that its statement is the
//! thread's step number `counter + pre` (0-based), so faults and accesses always know their
//! exact step. The budget is checked where a thread can loop or stop: loop back-edges,
//! `barrier`, the end of the kernel, and at faults (a fault past the budget is the step
//! bound). Jumps inside an expression (`&&`, `||`, `?:`) count nothing.

use super::repr::{repr_of, Repr};
use super::Unsupported;
use crate::annotation::Mention;
use crate::launch::Launch;
use crate::monoid::Monoid;
use crate::race::AccessKind;
use crate::warp::ProgramOrder;
use lang::ast::{BinOp, Space, Span, UnOp};
use lang::core::{
    Annotation, AtomicOp, Builtin, DimQuery, Expr, ExprKind, Fence, IntFn, Kernel, Lit, MathFn,
    StmtKind, Ty,
};
use std::collections::HashMap;

pub(crate) type Reg = u16;

/// No site.
pub(crate) const NO_SITE: u32 = u32::MAX;

/// One instruction. `d` is the destination register, `a`, `b` operands, `site` an index into
/// [`Program::sites`]; jump targets are instruction indices.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Inst {
    Mov {
        d: Reg,
        a: Reg,
    },
    // 32-bit wrapping arithmetic, identical on int and uint bit patterns.
    Add {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Sub {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Mul {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    And {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Or {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Xor {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Eq {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Ne {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    DivI {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    RemI {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    DivU {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    RemU {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    ShlI {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    ShrI {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    ShlU {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    ShrU {
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    LtI {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    LeI {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    LtU {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    LeU {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    MinI {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    MaxI {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    MinU {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    MaxU {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    AddF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    SubF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    MulF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    DivF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    LtF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    LeF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    EqF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    NeF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    /// `min(a, b)` on floats: `a < b ? a : b`.
    MinF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    /// `max(a, b)` on floats: `a < b ? b : a`.
    MaxF {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    CombIv {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    CombV1 {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    CombV2 {
        d: Reg,
        a: Reg,
        b: Reg,
    },
    /// 32-bit wrapping negation (int and uint).
    Neg {
        d: Reg,
        a: Reg,
    },
    NegF {
        d: Reg,
        a: Reg,
    },
    /// 32-bit bitwise not.
    BitNot {
        d: Reg,
        a: Reg,
    },
    /// `d = (a == 0)`: `!` on int/uint/bool.
    IsZ {
        d: Reg,
        a: Reg,
    },
    /// `d = (a != 0)`: truth of int/uint/bool, conversion to bool.
    NeZ {
        d: Reg,
        a: Reg,
    },
    IsZF {
        d: Reg,
        a: Reg,
    },
    NeZF {
        d: Reg,
        a: Reg,
    },
    I2F {
        d: Reg,
        a: Reg,
    },
    U2F {
        d: Reg,
        a: Reg,
    },
    F2I {
        d: Reg,
        a: Reg,
    },
    F2U {
        d: Reg,
        a: Reg,
    },
    /// A conversion that no dedicated instruction does (from or to `char`, `short`,
    /// `long`, `double` and their unsigned kin), word to word through [`crate::Value`]'s
    /// one definition of C's conversions.
    Conv {
        d: Reg,
        a: Reg,
        from: Repr,
        to: Repr,
    },
    /// A binary operator on `long`, `ulong` or `double` words (`r`), through
    /// [`crate::Value::binary`]; `site` reports a division by zero or a shift count out of
    /// range. Comparisons give a `bool` word.
    Wide {
        op: BinOp,
        r: Repr,
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    /// A unary operator on `long`, `ulong` or `double` words.
    WideUn {
        op: UnOp,
        r: Repr,
        d: Reg,
        a: Reg,
    },
    /// `min` (`min` true) or `max` on `long`, `ulong` or `double` words.
    WideMinMax {
        min: bool,
        r: Repr,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    /// `log2`; `signed`: the operand is an int (else a uint; other operands were replaced by
    /// a zero register); the result is converted to `to`.
    Log2 {
        d: Reg,
        a: Reg,
        signed: bool,
        to: Repr,
    },
    /// A math function of `float` operands `a`, `b`, `c` (those past its arity unused).
    Math {
        f: MathFn,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// An integer function of operands `a`, `b`, `c` of type `gen` (those past its arity
    /// unused), on their words ([`IntFn::apply`]).
    IntFn {
        f: IntFn,
        gen: Ty,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    Load {
        d: Reg,
        i: Reg,
        site: u32,
    },
    /// A load of an annotation's condition (S-ASSERT): memory as it is, not an access
    /// for races, so never through the run's policy.
    Peek {
        d: Reg,
        i: Reg,
        site: u32,
    },
    Peek2 {
        d: Reg,
        i: Reg,
        j: Reg,
        site: u32,
    },
    /// S-ASSERT: a fault at `site` when `c` is false; `check` indexes [`Program::checks`].
    Assert {
        c: Reg,
        site: u32,
        check: u32,
    },
    Load2 {
        d: Reg,
        i: Reg,
        j: Reg,
        site: u32,
    },
    Store {
        i: Reg,
        v: Reg,
        site: u32,
    },
    Store2 {
        i: Reg,
        j: Reg,
        v: Reg,
        site: u32,
    },
    /// Forward jump adding `steps`.
    Jump {
        t: u32,
        steps: u16,
    },
    /// Loop back-edge adding `steps` and checking the budget.
    Loop {
        t: u32,
        steps: u16,
    },
    /// Jump when `c` is zero (false); `st`/`sf`: steps added when the jump is taken / not.
    Jz {
        c: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    /// Jump when `c` is non-zero (true).
    Jnz {
        c: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    /// Fused `if`/`while` condition `a < b` (int): jump to `t` when false.
    JnLtI {
        a: Reg,
        b: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    JnLeI {
        a: Reg,
        b: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    JnLtU {
        a: Reg,
        b: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    JnLeU {
        a: Reg,
        b: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    JnEq {
        a: Reg,
        b: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    JnNe {
        a: Reg,
        b: Reg,
        t: u32,
        st: u16,
        sf: u16,
    },
    /// S-ATOMIC on the element of `site` (indices in the site's registers): `d` gets the
    /// old value; `a`, `b` are the operands (`b` only for cmpxchg); `signed`: an `int`
    /// or `long` element (min/max compare signed); `wide`: a `long` or `ulong` element.
    Atomic {
        op: AtomicOp,
        signed: bool,
        wide: bool,
        d: Reg,
        a: Reg,
        b: Reg,
        site: u32,
    },
    /// `stmt`: the barrier statement (index into [`Program::spans`]).
    Barrier {
        steps: u16,
        fence: Fence,
        stmt: u32,
    },
    Halt {
        steps: u16,
    },
    /// `--uninit check`: a fault at `site` when variable `var` was never assigned (its bit
    /// in the mask registers after the variables, [`Program::mask_base`], is clear).
    UseVar {
        var: u32,
        site: u32,
    },
    /// `--uninit check`: variable `var` is assigned (sets its bit).
    DefVar {
        var: u32,
    },
    /// `--uninit check`: variable `var`'s declaration without initialiser is reached again
    /// (an entry into the loop body that declares it): undefined (clears its bit).
    UndefVar {
        var: u32,
    },
    /// The start of a statement, emitted only when compiling for warps
    /// ([`compile`]`(.., true)`): `order` is its [`ProgramOrder`] number, `branch` whether
    /// it is an `if` or `while` test. The interpreter stops here, so that a warp can pick
    /// the lanes of its next instruction ([`super::warp`]).
    Sync {
        order: u32,
        branch: bool,
    },
}

const _: () = assert!(std::mem::size_of::<Inst>() == 16);

/// A statement-level location: an array access or a faulting operator.
#[derive(Clone, Debug)]
pub(crate) struct Site {
    /// The array accessed (accesses only).
    pub arr: u32,
    /// The statement (index into [`Program::spans`]).
    pub stmt: u32,
    /// The statement is the thread's step `counter + pre` of the interval (0-based).
    pub pre: i32,
    /// Per index: the index register holds an `int` (sign-extend) rather than a `uint`.
    pub signed: [bool; 2],
    /// For a store: its index registers (checked before a fault of its value is reported,
    /// since S-ARRAY checks the element before evaluating the right-hand side).
    pub regs: [Reg; 2],
    pub nidx: u8,
    /// For a site inside a store's value: that store's site (else [`NO_SITE`]).
    pub guard: u32,
}

/// What a failed annotation reports: its name and, per variable or parameter its condition
/// reads, `name` and where its value is.
#[derive(Clone, Debug)]
pub(crate) struct Check {
    pub annotation: Annotation,
    pub mentions: Vec<(String, CheckValue)>,
}

#[derive(Clone, Debug)]
pub(crate) enum CheckValue {
    /// A variable's register.
    Reg(Reg, Repr),
    /// A launch parameter (folded into the program).
    Const(crate::Value),
}

/// A compiled kernel for one launch (parameters and monoid are folded into constants).
#[derive(Clone, Debug)]
pub(crate) struct Program {
    pub code: Vec<Inst>,
    pub nregs: usize,
    pub nvars: usize,
    /// Registers holding launch-wide constants.
    pub consts: Vec<(Reg, u64)>,
    pub tid_reg: Option<Reg>,
    pub gid_reg: Option<Reg>,
    pub group_reg: Option<Reg>,
    /// Per-dimension builtins that differ between the threads of a group
    /// (`get_local_id(d)`, `get_global_id(d)`), and between groups (`get_group_id(d)`).
    pub thread_builtins: Vec<(Reg, Builtin)>,
    pub group_builtins: Vec<(Reg, Builtin)>,
    /// Some barrier does not order `local` (resp. `global`) accesses: races on arrays of
    /// that space can span barrier intervals.
    pub unfenced: Fence,
    /// Initial value of every variable.
    pub var_init: Vec<u64>,
    pub sites: Vec<Site>,
    /// Span of every statement.
    pub spans: Vec<Span>,
    pub arr_repr: Vec<Repr>,
    /// Per array: some statement stores to it (arrays never written cannot race).
    pub written: Vec<bool>,
    /// The annotations (S-ASSERT) of the kernel.
    pub checks: Vec<Check>,
    /// Under `--uninit check`: the first of the registers (saved with the variables) whose
    /// bits say which variables are assigned, one bit per variable; the variables' names.
    pub mask_base: usize,
    pub var_names: Vec<String>,
}

struct Compiler<'a> {
    kernel: &'a Kernel,
    launch: &'a Launch,
    monoid: Monoid,
    code: Vec<Inst>,
    sites: Vec<Site>,
    spans: Vec<Span>,
    consts: HashMap<u64, Reg>,
    const_list: Vec<(Reg, u64)>,
    nvars: u32,
    /// First temporary register (after vars and constants are known we renumber temps).
    next_temp: u32,
    max_temp: u32,
    builtin_regs: HashMap<Builtin, Reg>,
    written: Vec<bool>,
    /// Current statement.
    stmt: u32,
    /// Statements completed in the current run and not yet counted.
    pre: u32,
    /// Statements counted ahead and not yet completed.
    credit: u32,
    /// The store whose value is being compiled.
    guard: u32,
    /// Compiling an annotation's condition: loads are peeks.
    peek: bool,
    checks: Vec<Check>,
    /// When compiling for warps: the program order, for the statements' [`Inst::Sync`].
    order: Option<ProgramOrder>,
    /// `--uninit check`: variable reads and assignments are checked ([`Inst::UseVar`]).
    uninit: bool,
}

/// Temporaries are numbered from `TEMP_BASE` during compilation and moved after the
/// constants at the end.
const TEMP_BASE: u32 = 1 << 15;

/// Compiles the launch's kernel; `warp`: with an [`Inst::Sync`] at the start of every
/// statement, for lock-step warps (the plain executor never sees one).
pub(crate) fn compile(launch: &Launch, warp: bool) -> Result<Program, Unsupported> {
    let kernel = &*launch.kernel;
    if kernel.has_item_fences() {
        // Its race tracker keeps one barrier epoch per work-group and memory space.
        return unsupported(
            "barrier fence flags computed at run time (per work-item barrier epochs)",
        );
    }
    if kernel.has_permissions() {
        // The permission table ([`crate::perm`]) is kept by the reference semantics only.
        return unsupported("permission statements (the reference semantics checks them)");
    }
    let monoid = launch.monoid;
    // Under `--uninit check` one mask register per 64 variables follows the variables.
    let masks = if launch.checks_uninit() {
        kernel.vars.len().div_ceil(64)
    } else {
        0
    };
    let mut c = Compiler {
        kernel,
        launch,
        monoid,
        code: Vec::new(),
        sites: Vec::new(),
        spans: Vec::new(),
        consts: HashMap::new(),
        const_list: Vec::new(),
        nvars: (kernel.vars.len() + masks) as u32,
        next_temp: TEMP_BASE,
        max_temp: TEMP_BASE,
        builtin_regs: HashMap::new(),
        written: vec![false; kernel.arrays.len()],
        stmt: 0,
        pre: 0,
        credit: 0,
        guard: NO_SITE,
        peek: false,
        checks: Vec::new(),
        order: warp.then(|| ProgramOrder::new(kernel)),
        uninit: launch.checks_uninit(),
    };
    let arr_repr = kernel
        .arrays
        .iter()
        .map(|a| repr_of(a.elem, monoid))
        .collect::<Result<Vec<_>, _>>()?;
    let mut var_init = kernel
        .vars
        .iter()
        .map(|v| default_slot(v.ty, monoid))
        .collect::<Result<Vec<_>, _>>()?;
    var_init.extend(std::iter::repeat_n(0, masks));
    c.block(Kernel::BODY)?;
    let steps = c.steps()?;
    c.code.push(Inst::Halt { steps });

    // Renumber temporaries after vars and constants.
    let first_temp = c.nvars + c.const_list.len() as u32 + c.builtin_regs.len() as u32;
    let ntemps = c.max_temp - TEMP_BASE;
    if first_temp >= TEMP_BASE || first_temp + ntemps > u16::MAX as u32 {
        return unsupported("too many variables, constants or temporaries");
    }
    let fix = |r: &mut Reg| {
        if *r as u32 >= TEMP_BASE {
            *r = (*r as u32 - TEMP_BASE + first_temp) as Reg;
        }
    };
    for inst in &mut c.code {
        for_each_reg(inst, fix);
    }
    for site in &mut c.sites {
        for r in &mut site.regs {
            fix(r);
        }
    }
    let nregs = (first_temp + ntemps) as usize;
    for inst in &c.code {
        let mut ok = true;
        for_each_reg(&mut inst.clone(), |r| ok &= (*r as usize) < nregs);
        assert!(ok, "register out of range in {inst:?}");
        match *inst {
            Inst::Jump { t, .. }
            | Inst::Loop { t, .. }
            | Inst::Jz { t, .. }
            | Inst::Jnz { t, .. }
            | Inst::JnLtI { t, .. }
            | Inst::JnLeI { t, .. }
            | Inst::JnLtU { t, .. }
            | Inst::JnLeU { t, .. }
            | Inst::JnEq { t, .. }
            | Inst::JnNe { t, .. } => assert!((t as usize) < c.code.len()),
            _ => {}
        }
    }
    let b = |k| c.builtin_regs.get(&k).copied();
    let mut consts = c.const_list.clone();
    let (mut thread_builtins, mut group_builtins) = (Vec::new(), Vec::new());
    for (&k, &r) in &c.builtin_regs {
        match k {
            Builtin::LocalId | Builtin::GlobalId | Builtin::GroupId => {}
            Builtin::Dim(DimQuery::LocalId | DimQuery::GlobalId, _) => thread_builtins.push((r, k)),
            Builtin::Dim(DimQuery::GroupId, _) => group_builtins.push((r, k)),
            // The same for every thread of the launch.
            _ => consts.push((
                r,
                launch.builtin(k, 0, 0).as_i64().unwrap_or(0) as i32 as u32 as u64,
            )),
        }
    }
    let mut unfenced = Fence {
        local: false,
        global: false,
    };
    for inst in &c.code {
        if let Inst::Barrier { fence, .. } = inst {
            unfenced.local |= !fence.local;
            unfenced.global |= !fence.global;
        }
    }
    // A race needs a write: a space none of whose arrays is written has no race to carry
    // across barriers (e.g. OpenCL's `barrier(CLK_LOCAL_MEM_FENCE)` in a kernel with no
    // `global` array written), so it needs neither history nor sequential intervals.
    let written_in =
        |space: Space| (kernel.arrays.iter().zip(&c.written)).any(|(a, &w)| w && a.space == space);
    unfenced.local &= written_in(Space::Local);
    unfenced.global &= written_in(Space::Global);
    Ok(Program {
        tid_reg: b(Builtin::LocalId),
        gid_reg: b(Builtin::GlobalId),
        group_reg: b(Builtin::GroupId),
        thread_builtins,
        group_builtins,
        unfenced,
        consts,
        code: c.code,
        nregs,
        nvars: kernel.vars.len() + masks,
        var_init,
        sites: c.sites,
        spans: c.spans,
        arr_repr,
        written: c.written,
        checks: c.checks,
        mask_base: kernel.vars.len(),
        var_names: if masks > 0 {
            kernel.vars.iter().map(|v| v.name.clone()).collect()
        } else {
            Vec::new()
        },
    })
}

pub(crate) fn default_slot(ty: Ty, monoid: Monoid) -> Result<u64, Unsupported> {
    let r = repr_of(ty, monoid)?;
    super::repr::encode(&crate::value::Value::default_of(ty, monoid), r)
}

fn for_each_reg(inst: &mut Inst, mut f: impl FnMut(&mut Reg)) {
    use Inst::*;
    match inst {
        Mov { d, a }
        | Neg { d, a }
        | NegF { d, a }
        | BitNot { d, a }
        | IsZ { d, a }
        | NeZ { d, a }
        | IsZF { d, a }
        | NeZF { d, a }
        | I2F { d, a }
        | U2F { d, a }
        | F2I { d, a }
        | F2U { d, a }
        | Conv { d, a, .. }
        | WideUn { d, a, .. }
        | Log2 { d, a, .. } => {
            f(d);
            f(a);
        }
        Add { d, a, b }
        | Sub { d, a, b }
        | Mul { d, a, b }
        | And { d, a, b }
        | Or { d, a, b }
        | Xor { d, a, b }
        | Eq { d, a, b }
        | Ne { d, a, b }
        | DivI { d, a, b, .. }
        | RemI { d, a, b, .. }
        | DivU { d, a, b, .. }
        | RemU { d, a, b, .. }
        | ShlI { d, a, b, .. }
        | ShrI { d, a, b, .. }
        | ShlU { d, a, b, .. }
        | ShrU { d, a, b, .. }
        | LtI { d, a, b }
        | LeI { d, a, b }
        | LtU { d, a, b }
        | LeU { d, a, b }
        | MinI { d, a, b }
        | MaxI { d, a, b }
        | MinU { d, a, b }
        | MaxU { d, a, b }
        | AddF { d, a, b }
        | SubF { d, a, b }
        | MulF { d, a, b }
        | DivF { d, a, b }
        | LtF { d, a, b }
        | LeF { d, a, b }
        | EqF { d, a, b }
        | NeF { d, a, b }
        | MinF { d, a, b }
        | MaxF { d, a, b }
        | CombIv { d, a, b }
        | CombV1 { d, a, b }
        | CombV2 { d, a, b }
        | Wide { d, a, b, .. }
        | WideMinMax { d, a, b, .. } => {
            f(d);
            f(a);
            f(b);
        }
        Load { d, i, .. } | Peek { d, i, .. } => {
            f(d);
            f(i);
        }
        Assert { c, .. } => f(c),
        Load2 { d, i, j, .. } | Peek2 { d, i, j, .. } => {
            f(d);
            f(i);
            f(j);
        }
        Store { i, v, .. } => {
            f(i);
            f(v);
        }
        Store2 { i, j, v, .. } => {
            f(i);
            f(j);
            f(v);
        }
        Atomic { d, a, b, .. } => {
            f(d);
            f(a);
            f(b);
        }
        Math { d, a, b, c, .. } | IntFn { d, a, b, c, .. } => {
            f(d);
            f(a);
            f(b);
            f(c);
        }
        Jz { c, .. } | Jnz { c, .. } => f(c),
        JnLtI { a, b, .. }
        | JnLeI { a, b, .. }
        | JnLtU { a, b, .. }
        | JnLeU { a, b, .. }
        | JnEq { a, b, .. }
        | JnNe { a, b, .. } => {
            f(a);
            f(b);
        }
        Jump { .. }
        | Loop { .. }
        | Barrier { .. }
        | Halt { .. }
        | Sync { .. }
        | UseVar { .. }
        | DefVar { .. }
        | UndefVar { .. } => {}
    }
}

/// Why a kernel with pointer values runs on the reference semantics only (for now).
const POINTERS: &str = "pointer values (the reference semantics runs them)";

fn unsupported<T>(msg: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported::new(msg))
}

impl Compiler<'_> {
    fn repr(&self, ty: Ty) -> Result<Repr, Unsupported> {
        repr_of(ty, self.monoid)
    }

    fn konst(&mut self, v: u64) -> Reg {
        if let Some(&r) = self.consts.get(&v) {
            return r;
        }
        // Constants are numbered after the variables; builtins after constants are
        // allocated lazily too, so number constants in a separate range and fix up below.
        let r = (self.nvars + self.const_list.len() as u32 + self.builtin_regs.len() as u32)
            .min(TEMP_BASE - 1) as Reg;
        self.consts.insert(v, r);
        self.const_list.push((r, v));
        r
    }

    fn builtin(&mut self, b: Builtin) -> Reg {
        if let Some(&r) = self.builtin_regs.get(&b) {
            return r;
        }
        let r = (self.nvars + self.const_list.len() as u32 + self.builtin_regs.len() as u32)
            .min(TEMP_BASE - 1) as Reg;
        self.builtin_regs.insert(b, r);
        r
    }

    fn temp(&mut self) -> Reg {
        let r = self.next_temp;
        self.next_temp = (self.next_temp + 1).min(u16::MAX as u32);
        self.max_temp = self.max_temp.max(self.next_temp);
        r as Reg
    }

    /// The statements of the current run not yet counted, as an instruction field.
    fn steps(&self) -> Result<u16, Unsupported> {
        debug_assert_eq!(self.credit, 0);
        u16::try_from(self.pre).map_err(|_| Unsupported::new("a straight-line run is too long"))
    }

    /// Number of statements at the start of block `b` before any `if`, `while`, `barrier`.
    fn lead(&self, b: usize) -> u32 {
        self.kernel.blocks[b]
            .iter()
            .take_while(|s| {
                matches!(
                    s.kind,
                    StmtKind::Assign { .. }
                        | StmtKind::Store { .. }
                        | StmtKind::Atomic { .. }
                        | StmtKind::Check { .. }
                )
            })
            .count() as u32
    }

    /// Marks the start of statement `index` of block `block` (warp compilation only).
    fn sync(&mut self, block: usize, index: usize, branch: bool) {
        if let Some(order) = &self.order {
            let order = order.of(block, index);
            self.code.push(Inst::Sync { order, branch });
        }
    }

    /// Variable `var` is assigned (`--uninit check`).
    fn define(&mut self, var: usize) {
        if self.uninit {
            self.code.push(Inst::DefVar { var: var as u32 });
        }
    }

    /// A statement completed.
    fn done(&mut self) {
        if self.credit > 0 {
            self.credit -= 1;
        } else {
            self.pre += 1;
        }
    }

    fn here(&self) -> u32 {
        self.code.len() as u32
    }

    fn site(&mut self, arr: u32, kind: AccessKind, signed: [bool; 2]) -> u32 {
        self.sites.push(Site {
            arr,
            stmt: self.stmt,
            pre: self.pre as i32 - self.credit as i32,
            signed,
            regs: [0; 2],
            nidx: 0,
            guard: self.guard,
        });
        if kind != AccessKind::Read {
            self.written[arr as usize] = true;
        }
        (self.sites.len() - 1) as u32
    }

    fn patch(&mut self, at: u32, target: u32) {
        match &mut self.code[at as usize] {
            Inst::Jump { t, .. }
            | Inst::Loop { t, .. }
            | Inst::Jz { t, .. }
            | Inst::Jnz { t, .. }
            | Inst::JnLtI { t, .. }
            | Inst::JnLeI { t, .. }
            | Inst::JnLtU { t, .. }
            | Inst::JnLeU { t, .. }
            | Inst::JnEq { t, .. }
            | Inst::JnNe { t, .. } => *t = target,
            other => unreachable!("patching {other:?}"),
        }
    }

    /// Ends the current run with a jump to the next instruction if it has statements.
    fn flush(&mut self) -> Result<(), Unsupported> {
        if self.pre > 0 {
            let t = self.here() + 1;
            let steps = self.steps()?;
            self.code.push(Inst::Jump { t, steps });
            self.pre = 0;
        }
        Ok(())
    }

    fn block(&mut self, b: usize) -> Result<(), Unsupported> {
        let kernel = self.kernel;
        for (i, s) in kernel.blocks[b].iter().enumerate() {
            if !matches!(
                s.kind,
                StmtKind::Barrier { .. } | StmtKind::While { .. } | StmtKind::If { .. }
            ) {
                self.sync(b, i, false);
            }
            self.stmt = self.spans.len() as u32;
            self.spans.push(s.span.clone());
            let mark = self.next_temp;
            match &s.kind {
                StmtKind::Assign { var, value } => {
                    self.expr_into(value, *var as Reg)?;
                    self.define(*var);
                    self.done();
                }
                StmtKind::Store {
                    array,
                    index,
                    value,
                } => {
                    let (regs, signed) = self.indices(index)?;
                    let site = self.site(*array as u32, AccessKind::Write, signed);
                    self.sites[site as usize].nidx = regs.len() as u8;
                    for (k, &r) in regs.iter().enumerate().take(2) {
                        self.sites[site as usize].regs[k] = r;
                    }
                    self.guard = site;
                    let v = self.expr(value);
                    self.guard = NO_SITE;
                    let v = v?;
                    self.code.push(match regs[..] {
                        [i] => Inst::Store { i, v, site },
                        [i, j] => Inst::Store2 { i, j, v, site },
                        _ => return unsupported("arrays have one or two dimensions"),
                    });
                    self.done();
                }
                StmtKind::If { .. } => {
                    // An `else if` chain (an `else` block holding only an `if`) is compiled
                    // in this loop, not by recursion, so that its length costs no stack;
                    // `exits` jump from the end of each then-branch to the end of the chain.
                    let mut s = s;
                    let mut at = (b, i);
                    let mut exits = Vec::new();
                    loop {
                        self.sync(at.0, at.1, true);
                        let StmtKind::If { cond, then, els } = &s.kind else {
                            unreachable!("the chain continues only with an `if`")
                        };
                        let has_else = !kernel.blocks[*els].is_empty();
                        let (lt, le) = (self.lead(*then), self.lead(*els));
                        let jz = self.cond_jump(cond, le, lt)?;
                        self.next_temp = mark;
                        self.credit = lt;
                        self.block(*then)?;
                        if !has_else {
                            self.flush()?;
                            let end = self.here();
                            self.patch(jz, end);
                            for j in exits {
                                self.patch(j, end);
                            }
                            break;
                        }
                        let steps = self.steps()?;
                        exits.push(self.here());
                        self.code.push(Inst::Jump { t: 0, steps });
                        self.pre = 0;
                        let else_start = self.here();
                        self.patch(jz, else_start);
                        self.credit = le;
                        if let Some(next) = kernel.else_if(*els) {
                            // What `self.block(*els)` does for its one statement.
                            self.stmt = self.spans.len() as u32;
                            self.spans.push(next.span.clone());
                            s = next;
                            at = (*els, 0);
                            continue;
                        }
                        self.block(*els)?;
                        self.flush()?;
                        let end = self.here();
                        for j in exits {
                            self.patch(j, end);
                        }
                        break;
                    }
                }
                StmtKind::While { cond, body } => {
                    self.flush()?;
                    let head = self.here();
                    self.sync(b, i, true);
                    let lb = self.lead(*body);
                    let jz = self.cond_jump(cond, 0, lb)?;
                    self.next_temp = mark;
                    if self.uninit {
                        for (v, decl) in self.kernel.vars.iter().enumerate() {
                            if decl.fresh_in == Some(*body) {
                                self.code.push(Inst::UndefVar { var: v as u32 });
                            }
                        }
                    }
                    self.credit = lb;
                    self.block(*body)?;
                    let steps = self.steps()?;
                    self.code.push(Inst::Loop { t: head, steps });
                    self.pre = 0;
                    let exit = self.here();
                    self.patch(jz, exit);
                }
                StmtKind::Atomic {
                    op,
                    array,
                    index,
                    args,
                    result,
                } => {
                    let (regs, signed) = self.indices(index)?;
                    if regs.len() > 2 {
                        return unsupported("arrays have one or two dimensions");
                    }
                    let site = self.site(*array as u32, AccessKind::Atomic, signed);
                    self.sites[site as usize].nidx = regs.len() as u8;
                    for (k, &r) in regs.iter().enumerate() {
                        self.sites[site as usize].regs[k] = r;
                    }
                    // Operand faults come after the element's bounds check (S-ATOMIC).
                    self.guard = site;
                    let operands: Result<Vec<Reg>, Unsupported> =
                        args.iter().map(|a| self.expr(a)).collect();
                    self.guard = NO_SITE;
                    let operands = operands?;
                    let zero = self.konst(0);
                    let d = match result {
                        Some(v) => *v as Reg,
                        None => self.temp(),
                    };
                    self.code.push(Inst::Atomic {
                        op: *op,
                        signed: matches!(self.kernel.arrays[*array].elem, Ty::Int | Ty::Long),
                        wide: matches!(self.kernel.arrays[*array].elem, Ty::Long | Ty::Ulong),
                        d,
                        a: operands.first().copied().unwrap_or(zero),
                        b: operands.get(1).copied().unwrap_or(zero),
                        site,
                    });
                    if let Some(v) = result {
                        self.define(*v);
                    }
                    self.done();
                }
                StmtKind::StoreAt { .. } => return unsupported(POINTERS),
                StmtKind::Check { annotation, cond } => {
                    self.peek = true;
                    let c = self.expr(cond);
                    self.peek = false;
                    let c = c?;
                    let site = self.site(0, AccessKind::Read, [false; 2]);
                    let mut mentions = Vec::new();
                    for m in crate::annotation::mentions(cond) {
                        let (name, value) = match m {
                            Mention::Var(v) => {
                                let var = &self.kernel.vars[v];
                                let r = self.repr(var.ty)?;
                                (var.name.clone(), CheckValue::Reg(v as Reg, r))
                            }
                            Mention::Param(p) => (
                                self.kernel.params[p].name.clone(),
                                CheckValue::Const(self.launch.params[p].clone()),
                            ),
                        };
                        mentions.push((name, value));
                    }
                    self.checks.push(Check {
                        annotation: *annotation,
                        mentions,
                    });
                    let check = (self.checks.len() - 1) as u32;
                    self.code.push(Inst::Assert { c, site, check });
                    self.done();
                }
                StmtKind::Perm { .. } => {
                    return unsupported(
                        "permission statements (the reference semantics checks them)",
                    )
                }
                StmtKind::Barrier { fence, .. } => {
                    let steps = self.steps()?;
                    self.code.push(Inst::Barrier {
                        steps,
                        fence: *fence,
                        stmt: self.stmt,
                    });
                    self.pre = 0;
                }
            }
            self.next_temp = mark;
        }
        Ok(())
    }

    /// Evaluates an `if`/`while` condition (a step of its own) and emits the jump taken
    /// when it is false; `lead_t`/`lead_f`: statements counted ahead on the jump (taken) /
    /// fall-through edge. Returns the jump's index for patching.
    fn cond_jump(&mut self, cond: &Expr, lead_t: u32, lead_f: u32) -> Result<u32, Unsupported> {
        let base = self.steps()? as u32 + 1;
        let too_long = || Unsupported::new("a straight-line run is too long");
        let st = u16::try_from(base + lead_t).map_err(|_| too_long())?;
        let sf = u16::try_from(base + lead_f).map_err(|_| too_long())?;
        self.pre = 0;
        if let ExprKind::Binary(op, a, b) = &cond.kind {
            let r = self.repr(a.ty)?;
            let fused = matches!(r, Repr::I32 | Repr::U32 | Repr::Bool)
                && matches!(
                    op,
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
                )
                && (r != Repr::Bool || matches!(op, BinOp::Eq | BinOp::Ne));
            if fused {
                // Sites of the condition belong to the statement counted by this jump.
                self.pre = base - 1;
                let ra = self.expr(a)?;
                let rb = self.expr(b)?;
                self.pre = 0;
                let signed = r == Repr::I32;
                let t = 0;
                let inst = match (op, signed) {
                    (BinOp::Lt, true) => Inst::JnLtI {
                        a: ra,
                        b: rb,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Le, true) => Inst::JnLeI {
                        a: ra,
                        b: rb,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Gt, true) => Inst::JnLtI {
                        a: rb,
                        b: ra,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Ge, true) => Inst::JnLeI {
                        a: rb,
                        b: ra,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Lt, false) => Inst::JnLtU {
                        a: ra,
                        b: rb,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Le, false) => Inst::JnLeU {
                        a: ra,
                        b: rb,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Gt, false) => Inst::JnLtU {
                        a: rb,
                        b: ra,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Ge, false) => Inst::JnLeU {
                        a: rb,
                        b: ra,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Eq, _) => Inst::JnEq {
                        a: ra,
                        b: rb,
                        t,
                        st,
                        sf,
                    },
                    (BinOp::Ne, _) => Inst::JnNe {
                        a: ra,
                        b: rb,
                        t,
                        st,
                        sf,
                    },
                    _ => unreachable!(),
                };
                let at = self.here();
                self.code.push(inst);
                return Ok(at);
            }
        }
        self.pre = base - 1;
        let c = self.truth(cond)?;
        self.pre = 0;
        let at = self.here();
        self.code.push(Inst::Jz { c, t: 0, st, sf });
        Ok(at)
    }

    /// Evaluates `e` and returns a register that is non-zero iff `e` is truthy.
    fn truth(&mut self, e: &Expr) -> Result<Reg, Unsupported> {
        let r = self.expr(e)?;
        Ok(match self.repr(e.ty)? {
            // Words of integer types are zero-extended: non-zero iff the value is.
            Repr::I32
            | Repr::U32
            | Repr::Bool
            | Repr::I8
            | Repr::U8
            | Repr::I16
            | Repr::U16
            | Repr::I64
            | Repr::U64 => r,
            Repr::F32 => {
                let d = self.temp();
                self.code.push(Inst::NeZF { d, a: r });
                d
            }
            Repr::F64 => {
                let d = self.temp();
                self.code.push(Inst::Conv {
                    d,
                    a: r,
                    from: Repr::F64,
                    to: Repr::Bool,
                });
                d
            }
            // `Value::truthy` of a monoid element is false.
            Repr::Interval | Repr::Ternary => self.konst(0),
        })
    }

    fn indices(&mut self, index: &[Expr]) -> Result<(Vec<Reg>, [bool; 2]), Unsupported> {
        let mut regs = Vec::new();
        let mut signed = [false; 2];
        for (k, e) in index.iter().enumerate() {
            let r = self.expr(e)?;
            // `as_i64`: ints sign-extend, uints zero-extend, anything else is index 0.
            let r = match self.repr(e.ty)? {
                Repr::I32 => {
                    signed[k.min(1)] = true;
                    r
                }
                // `as_i64` of a `long` or `ulong` is its 64-bit pattern, as for a `uint`.
                Repr::U32 | Repr::I64 | Repr::U64 => r,
                _ => self.konst(0),
            };
            regs.push(r);
        }
        Ok((regs, signed))
    }

    /// Evaluates `e` into register `d` (a variable).
    fn expr_into(&mut self, e: &Expr, d: Reg) -> Result<(), Unsupported> {
        // Operators whose single final instruction reads its operands before writing `d`
        // can target `d` directly; the rest go through a temporary.
        let direct = matches!(
            e.kind,
            ExprKind::Binary(op, ..) if !matches!(op, BinOp::LogAnd | BinOp::LogOr)
        ) || matches!(
            e.kind,
            ExprKind::Unary(..)
                | ExprKind::Cast(..)
                | ExprKind::Load { .. }
                | ExprKind::Min(..)
                | ExprKind::Max(..)
                | ExprKind::Bits(..)
                | ExprKind::Log2(..)
                | ExprKind::Math(..)
                | ExprKind::IntFn(..)
        );
        if direct {
            let r = self.expr_to(e, Some(d))?;
            debug_assert_eq!(r, d);
        } else {
            let r = self.expr(e)?;
            if r != d {
                self.code.push(Inst::Mov { d, a: r });
            }
        }
        Ok(())
    }

    fn expr(&mut self, e: &Expr) -> Result<Reg, Unsupported> {
        self.expr_to(e, None)
    }

    /// Evaluates `e`; the result is in the returned register, which is `dest` if given
    /// (only for operators whose final instruction computes the result).
    fn expr_to(&mut self, e: &Expr, dest: Option<Reg>) -> Result<Reg, Unsupported> {
        let mark = self.next_temp;
        let out = |c: &mut Self| -> Reg {
            c.next_temp = mark;
            match dest {
                Some(d) => d,
                None => c.temp(),
            }
        };
        Ok(match &e.kind {
            ExprKind::Lit(l) => self.konst(match *l {
                Lit::Int(v) => v as u32 as u64,
                Lit::Uint(v) => v as u64,
                Lit::Bool(b) => b as u64,
                Lit::Float(f) => f.to_bits() as u64,
                Lit::Long(v) => v as u64,
                Lit::Ulong(v) => v,
                Lit::Double(f) => f.to_bits(),
            }),
            ExprKind::Identity => {
                let v = default_slot(Ty::Generic, self.monoid)?;
                self.konst(v)
            }
            ExprKind::Var(v) => {
                if self.uninit {
                    let site = self.site(0, AccessKind::Read, [false; 2]);
                    self.code.push(Inst::UseVar {
                        var: *v as u32,
                        site,
                    });
                }
                *v as Reg
            }
            ExprKind::Param(p) => {
                let ty = self.kernel.params[*p].ty;
                let v = super::repr::encode(&self.launch.params[*p], self.repr(ty)?)?;
                self.konst(v)
            }
            ExprKind::Builtin(b) => self.builtin(*b),
            ExprKind::Null | ExprKind::Addr { .. } | ExprKind::PtrAdd(..) | ExprKind::Deref(..) => {
                return unsupported(POINTERS)
            }
            ExprKind::Load { array, index } => {
                let (regs, signed) = self.indices(index)?;
                let site = self.site(*array as u32, AccessKind::Read, signed);
                let d = out(self);
                let peek = self.peek;
                self.code.push(match regs[..] {
                    [i] if peek => Inst::Peek { d, i, site },
                    [i, j] if peek => Inst::Peek2 { d, i, j, site },
                    [i] => Inst::Load { d, i, site },
                    [i, j] => Inst::Load2 { d, i, j, site },
                    _ => return unsupported("arrays have one or two dimensions"),
                });
                d
            }
            ExprKind::Unary(op, a) => {
                let r = self.repr(a.ty)?;
                let ra = self.expr(a)?;
                let d = out(self);
                let inst = match (op, r) {
                    (UnOp::Neg, Repr::I32 | Repr::U32) => Inst::Neg { d, a: ra },
                    (UnOp::Neg, Repr::F32) => Inst::NegF { d, a: ra },
                    (UnOp::BitNot, Repr::I32 | Repr::U32) => Inst::BitNot { d, a: ra },
                    (UnOp::Not, Repr::I32 | Repr::U32 | Repr::Bool) => Inst::IsZ { d, a: ra },
                    (UnOp::Not, Repr::F32) => Inst::IsZF { d, a: ra },
                    (UnOp::Not, Repr::Interval | Repr::Ternary) => {
                        let one = self.konst(1);
                        Inst::Mov { d, a: one }
                    }
                    (UnOp::Not, Repr::I64 | Repr::U64) => Inst::IsZ { d, a: ra },
                    (_, Repr::I64 | Repr::U64 | Repr::F64) => Inst::WideUn {
                        op: *op,
                        r,
                        d,
                        a: ra,
                    },
                    _ => return unsupported(format!("unary {op:?} on {}", a.ty.name())),
                };
                self.code.push(inst);
                d
            }
            ExprKind::Binary(BinOp::LogAnd | BinOp::LogOr, a, b) => {
                let and = matches!(e.kind, ExprKind::Binary(BinOp::LogAnd, ..));
                let d = self.temp();
                let ta = self.truth(a)?;
                self.code.push(Inst::NeZ { d, a: ta });
                let j = self.here();
                self.code.push(if and {
                    Inst::Jz {
                        c: d,
                        t: 0,
                        st: 0,
                        sf: 0,
                    }
                } else {
                    Inst::Jnz {
                        c: d,
                        t: 0,
                        st: 0,
                        sf: 0,
                    }
                });
                let tb = self.truth(b)?;
                self.code.push(Inst::NeZ { d, a: tb });
                let end = self.here();
                self.patch(j, end);
                self.next_temp = d as u32 + 1;
                d
            }
            ExprKind::Binary(op, a, b) => {
                let r = self.repr(a.ty)?;
                let ra = self.expr(a)?;
                let rb = self.expr(b)?;
                let d = out(self);
                let inst = self.binop(*op, r, d, ra, rb)?;
                self.code.push(inst);
                d
            }
            ExprKind::Cond(c, a, b) => {
                let d = self.temp();
                let tc = self.truth(c)?;
                let jz = self.here();
                self.code.push(Inst::Jz {
                    c: tc,
                    t: 0,
                    st: 0,
                    sf: 0,
                });
                self.next_temp = d as u32 + 1;
                let ra = self.expr(a)?;
                self.code.push(Inst::Mov { d, a: ra });
                let j = self.here();
                self.code.push(Inst::Jump { t: 0, steps: 0 });
                self.next_temp = d as u32 + 1;
                let else_start = self.here();
                self.patch(jz, else_start);
                let rb = self.expr(b)?;
                self.code.push(Inst::Mov { d, a: rb });
                let end = self.here();
                self.patch(j, end);
                self.next_temp = d as u32 + 1;
                d
            }
            ExprKind::Cast(a) => {
                let from = self.repr(a.ty)?;
                let to = self.repr(e.ty)?;
                let ra = self.expr(a)?;
                let d = out(self);
                use Repr::*;
                let inst = match (from, to) {
                    (x, y) if x == y => Inst::Mov { d, a: ra },
                    (I32 | U32 | Bool, I32 | U32) => Inst::Mov { d, a: ra },
                    (I32 | U32, Bool) => Inst::NeZ { d, a: ra },
                    (F32, Bool) => Inst::NeZF { d, a: ra },
                    (I32, F32) => Inst::I2F { d, a: ra },
                    (U32 | Bool, F32) => Inst::U2F { d, a: ra },
                    (F32, I32) => Inst::F2I { d, a: ra },
                    (F32, U32) => Inst::F2U { d, a: ra },
                    (Interval | Ternary, Bool) => {
                        let z = self.konst(0);
                        Inst::Mov { d, a: z }
                    }
                    (from, to) if from.ty().is_some() && to.ty().is_some() => {
                        Inst::Conv { d, a: ra, from, to }
                    }
                    _ => {
                        return unsupported(format!(
                            "cast from {} to {} under the {} monoid",
                            a.ty.name(),
                            e.ty.name(),
                            self.monoid
                        ))
                    }
                };
                self.code.push(inst);
                d
            }
            // A word holds a value's bits (upper half zero for 32-bit types), so `as_T`
            // between types of one size is the same word.
            ExprKind::Bits(a) => {
                let ra = self.expr(a)?;
                let d = out(self);
                self.code.push(Inst::Mov { d, a: ra });
                d
            }
            ExprKind::Log2(a) => {
                let from = self.repr(a.ty)?;
                let to = self.repr(e.ty)?;
                if !matches!(to, Repr::I32 | Repr::U32 | Repr::Bool | Repr::F32) {
                    return unsupported(format!("log2 of type {}", e.ty.name()));
                }
                let ra = self.expr(a)?;
                let (ra, signed) = match from {
                    Repr::I32 => (ra, true),
                    Repr::U32 => (ra, false),
                    _ => (self.konst(0), false),
                };
                let d = out(self);
                self.code.push(Inst::Log2 {
                    d,
                    a: ra,
                    signed,
                    to,
                });
                d
            }
            ExprKind::Min(a, b) | ExprKind::Max(a, b) => {
                let min = matches!(e.kind, ExprKind::Min(..));
                let r = self.repr(a.ty)?;
                let ra = self.expr(a)?;
                let rb = self.expr(b)?;
                let d = out(self);
                self.code.push(match (r, min) {
                    (Repr::I32, true) => Inst::MinI { d, a: ra, b: rb },
                    (Repr::I32, false) => Inst::MaxI { d, a: ra, b: rb },
                    (Repr::U32, true) => Inst::MinU { d, a: ra, b: rb },
                    (Repr::U32, false) => Inst::MaxU { d, a: ra, b: rb },
                    (Repr::F32, true) => Inst::MinF { d, a: ra, b: rb },
                    (Repr::F32, false) => Inst::MaxF { d, a: ra, b: rb },
                    (Repr::I64 | Repr::U64 | Repr::F64, min) => Inst::WideMinMax {
                        min,
                        r,
                        d,
                        a: ra,
                        b: rb,
                    },
                    _ => return unsupported(format!("min/max on {}", a.ty.name())),
                });
                d
            }
            ExprKind::Math(f, args) => {
                let mut regs = Vec::new();
                for a in args {
                    regs.push(self.expr(a)?);
                }
                let zero = self.konst(0);
                let at = |i: usize| regs.get(i).copied().unwrap_or(zero);
                let d = out(self);
                self.code.push(Inst::Math {
                    f: *f,
                    d,
                    a: at(0),
                    b: at(1),
                    c: at(2),
                });
                d
            }
            ExprKind::IntFn(f, args) => {
                let mut regs = Vec::new();
                for a in args {
                    regs.push(self.expr(a)?);
                }
                let zero = self.konst(0);
                let at = |i: usize| regs.get(i).copied().unwrap_or(zero);
                let d = out(self);
                self.code.push(Inst::IntFn {
                    f: *f,
                    gen: args[0].ty,
                    d,
                    a: at(0),
                    b: at(1),
                    c: at(2),
                });
                d
            }
        })
    }

    fn binop(&mut self, op: BinOp, r: Repr, d: Reg, a: Reg, b: Reg) -> Result<Inst, Unsupported> {
        use BinOp::*;
        use Repr::*;
        if op == Combine {
            return Ok(match self.monoid {
                Monoid::IntAdd => Inst::Add { d, a, b },
                Monoid::IntMul => Inst::Mul { d, a, b },
                Monoid::IntMax => Inst::MaxI { d, a, b },
                Monoid::IntMin => Inst::MinI { d, a, b },
                Monoid::BitOr => Inst::Or { d, a, b },
                Monoid::FloatAdd => Inst::AddF { d, a, b },
                Monoid::Interval => Inst::CombIv { d, a, b },
                Monoid::Voigt1 => Inst::CombV1 { d, a, b },
                Monoid::Voigt2 => Inst::CombV2 { d, a, b },
                Monoid::List => return unsupported("the list monoid"),
            });
        }
        if matches!(r, I64 | U64 | F64) {
            let site = match op {
                Div | Rem | Shl | Shr => self.site(0, AccessKind::Read, [false; 2]),
                _ => NO_SITE,
            };
            return Ok(Inst::Wide {
                op,
                r,
                d,
                a,
                b,
                site,
            });
        }
        let int = matches!(r, I32 | U32);
        let s = r == I32;
        Ok(match (op, r) {
            (Add, I32 | U32) => Inst::Add { d, a, b },
            (Sub, I32 | U32) => Inst::Sub { d, a, b },
            (Mul, I32 | U32) => Inst::Mul { d, a, b },
            (Div | Rem | Shl | Shr, I32 | U32) => {
                let site = self.site(0, AccessKind::Read, [false; 2]);
                match (op, s) {
                    (Div, true) => Inst::DivI { d, a, b, site },
                    (Div, false) => Inst::DivU { d, a, b, site },
                    (Rem, true) => Inst::RemI { d, a, b, site },
                    (Rem, false) => Inst::RemU { d, a, b, site },
                    (Shl, true) => Inst::ShlI { d, a, b, site },
                    (Shl, false) => Inst::ShlU { d, a, b, site },
                    (Shr, true) => Inst::ShrI { d, a, b, site },
                    _ => Inst::ShrU { d, a, b, site },
                }
            }
            (BitAnd, _) if int || r == Bool => Inst::And { d, a, b },
            (BitOr, _) if int || r == Bool => Inst::Or { d, a, b },
            (BitXor, _) if int || r == Bool => Inst::Xor { d, a, b },
            (Eq, _) if int || r == Bool => Inst::Eq { d, a, b },
            (Ne, _) if int || r == Bool => Inst::Ne { d, a, b },
            (Lt, I32) => Inst::LtI { d, a, b },
            (Le, I32) => Inst::LeI { d, a, b },
            (Gt, I32) => Inst::LtI { d, a: b, b: a },
            (Ge, I32) => Inst::LeI { d, a: b, b: a },
            (Lt, U32) => Inst::LtU { d, a, b },
            (Le, U32) => Inst::LeU { d, a, b },
            (Gt, U32) => Inst::LtU { d, a: b, b: a },
            (Ge, U32) => Inst::LeU { d, a: b, b: a },
            (Add, F32) => Inst::AddF { d, a, b },
            (Sub, F32) => Inst::SubF { d, a, b },
            (Mul, F32) => Inst::MulF { d, a, b },
            (Div, F32) => Inst::DivF { d, a, b },
            (Lt, F32) => Inst::LtF { d, a, b },
            (Le, F32) => Inst::LeF { d, a, b },
            (Gt, F32) => Inst::LtF { d, a: b, b: a },
            (Ge, F32) => Inst::LeF { d, a: b, b: a },
            (Eq, F32) => Inst::EqF { d, a, b },
            (Ne, F32) => Inst::NeF { d, a, b },
            _ => return unsupported(format!("operator {} on {r:?} values", op.symbol())),
        })
    }
}
