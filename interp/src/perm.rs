//! Fractional permissions checked at run time (VerCors's permission-based separation
//! logic on concrete executions): who holds which fraction of each array element, moved
//! and checked by the core's permission statements ([`lang::core::StmtKind::Perm`]).
//!
//! Three kinds of holder: each thread; a pool of the permissions the kernel holds and
//! no thread does; and the launch's caller, who holds what the kernel's precondition does
//! not give the kernel. The pool starts with all of every element (a kernel without a
//! permission precondition gets every array whole); a kernel with one first gives all
//! back to the caller and has the caller lend it the precondition. A thread takes its
//! precondition from the pool and gives its postcondition back; a barrier collects every
//! thread's barrier precondition in the pool before any thread passes and hands out the
//! postconditions after. Because the threads take from one pool, what they require
//! together can never exceed what the kernel holds: the thread that would take too much
//! faults. A read needs a positive fraction, a write the whole permission.
//!
//! The table is part of the reference semantics' state; the fast executor does not keep
//! it (a kernel with permission statements runs on the reference semantics).

use lang::core::PermOp;
use num_rational::Ratio;

/// A fraction of a permission, exact.
pub type Frac = Ratio<i64>;

/// Who holds a fraction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    Caller,
    Pool,
    /// A thread, by its flat index in the launch.
    Thread(usize),
    /// A work-group's barrier: what its threads' barrier preconditions gave, which its
    /// postconditions hand out.
    Barrier(usize),
}

/// A key of the table: holder, array instance slot, row-major offset.
type Key = (Holder, usize, usize);

/// The permissions held, per holder and element; an absent entry is the holder's
/// starting amount (1 for the pool, 0 for the others).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Perms {
    held: imbl::OrdMap<Key, Frac>,
}

/// A transfer a permission statement makes once it is checked.
#[derive(Clone, Copy, Debug)]
pub struct Move {
    pub from: Holder,
    pub to: Holder,
    pub slot: usize,
    pub offset: usize,
    pub amount: Frac,
}

impl Perms {
    /// What `h` holds of element `offset` of instance `slot`.
    pub fn held(&self, h: Holder, slot: usize, offset: usize) -> Frac {
        let start = if h == Holder::Pool { 1 } else { 0 };
        self.held
            .get(&(h, slot, offset))
            .copied()
            .unwrap_or(Frac::from_integer(start))
    }

    /// Applies a checked move.
    pub fn apply(&mut self, m: Move) {
        let from = self.held(m.from, m.slot, m.offset) - m.amount;
        let to = self.held(m.to, m.slot, m.offset) + m.amount;
        self.held.insert((m.from, m.slot, m.offset), from);
        self.held.insert((m.to, m.slot, m.offset), to);
    }

    /// What permission statement `op` of thread `t` of work-group `group` does with `amount` of element
    /// (`slot`, `offset`): the move to make, or why it cannot (the fault's values: what
    /// is held and what is needed). `location` names the element as the source does.
    pub fn step(
        &self,
        op: PermOp,
        (t, group): (usize, usize),
        slot: usize,
        offset: usize,
        amount: Frac,
        location: &str,
    ) -> Result<Option<Move>, Vec<String>> {
        let thread = Holder::Thread(t);
        let (from, to) = match op {
            PermOp::Lend => (Holder::Caller, Holder::Pool),
            PermOp::Reclaim => (Holder::Pool, Holder::Caller),
            PermOp::Take => (Holder::Pool, thread),
            PermOp::Give => (thread, Holder::Pool),
            PermOp::Arrive => (thread, Holder::Barrier(group)),
            PermOp::Depart => (Holder::Barrier(group), thread),
            PermOp::Read | PermOp::Write => {
                let held = self.held(thread, slot, offset);
                let (ok, needed) = match op {
                    PermOp::Read => (held > Frac::from_integer(0), "> 0"),
                    _ => (held >= Frac::from_integer(1), "1"),
                };
                return match ok {
                    true => Ok(None),
                    false => Err(values(location, held, needed)),
                };
            }
        };
        if amount < Frac::from_integer(0) {
            return Err(values(location, self.held(from, slot, offset), "≥ 0"));
        }
        let held = self.held(from, slot, offset);
        if held < amount {
            return Err(values(location, held, &amount.to_string()));
        }
        Ok(Some(Move {
            from,
            to,
            slot,
            offset,
            amount,
        }))
    }
}

/// A fault's values: the location, the fraction held, the fraction needed.
fn values(location: &str, held: Frac, needed: &str) -> Vec<String> {
    vec![
        format!("location {location}"),
        format!("held {held}"),
        format!("needed {needed}"),
    ]
}

/// The words of a permission fault for statement `op` (its values as [`Perms::step`]
/// gives them): who lacks what.
pub fn describe(op: PermOp) -> &'static str {
    match op {
        PermOp::Lend => "the method's precondition asks for more than the whole permission",
        PermOp::Reclaim => "the method's postcondition returns more permission than the kernel holds",
        PermOp::Take => "a thread requires more permission than is left (the threads together require more than is available)",
        PermOp::Give | PermOp::Arrive => "a thread gives up more permission than it holds",
        PermOp::Depart => "a barrier hands out more permission than its threads gave it",
        PermOp::Read => "a read without permission",
        PermOp::Write => "a write without the whole permission",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn half() -> Frac {
        Frac::new(1, 2)
    }

    #[test]
    fn threads_split_what_the_pool_holds() {
        let mut p = Perms::default();
        for t in 0..2 {
            let m = p
                .step(PermOp::Take, (t, 0), 0, 3, half(), "a[3]")
                .unwrap()
                .unwrap();
            p.apply(m);
        }
        // A third half is more than the pool has left.
        let e = p
            .step(PermOp::Take, (2, 0), 0, 3, half(), "a[3]")
            .unwrap_err();
        assert_eq!(e, ["location a[3]", "held 0", "needed 1/2"]);
        // Halves allow reads, not writes.
        assert!(p.step(PermOp::Read, (0, 0), 0, 3, half(), "a[3]").is_ok());
        let e = p
            .step(PermOp::Write, (0, 0), 0, 3, half(), "a[3]")
            .unwrap_err();
        assert_eq!(e, ["location a[3]", "held 1/2", "needed 1"]);
        assert!(p.step(PermOp::Read, (2, 0), 0, 3, half(), "a[3]").is_err());
    }

    #[test]
    fn a_barrier_exchanges_through_the_pool() {
        let mut p = Perms::default();
        // The kernel's precondition: the caller lends a half.
        p.apply(
            p.step(PermOp::Reclaim, (0, 0), 0, 0, Frac::from_integer(1), "a[0]")
                .unwrap()
                .unwrap(),
        );
        p.apply(
            p.step(PermOp::Lend, (0, 0), 0, 0, half(), "a[0]")
                .unwrap()
                .unwrap(),
        );
        // A half is all there is.
        assert!(p
            .step(PermOp::Take, (0, 0), 0, 0, Frac::from_integer(1), "a[0]")
            .is_err());
        p.apply(
            p.step(PermOp::Lend, (0, 0), 0, 0, half(), "a[0]")
                .unwrap()
                .unwrap(),
        );
        p.apply(
            p.step(PermOp::Take, (0, 0), 0, 0, half(), "a[0]")
                .unwrap()
                .unwrap(),
        );
        p.apply(
            p.step(PermOp::Take, (1, 0), 0, 0, half(), "a[0]")
                .unwrap()
                .unwrap(),
        );
        // Thread 1 gives its half at the barrier, thread 0 gets it after.
        p.apply(
            p.step(PermOp::Arrive, (1, 0), 0, 0, half(), "a[0]")
                .unwrap()
                .unwrap(),
        );
        p.apply(
            p.step(PermOp::Depart, (0, 0), 0, 0, half(), "a[0]")
                .unwrap()
                .unwrap(),
        );
        assert!(p.step(PermOp::Write, (0, 0), 0, 0, half(), "a[0]").is_ok());
        // The barrier handed out what it got.
        let e = p
            .step(PermOp::Depart, (1, 0), 0, 0, half(), "a[0]")
            .unwrap_err();
        assert_eq!(e[1], "held 0");
        // Thread 1 gave what it had: it cannot give again.
        assert!(p
            .step(PermOp::Arrive, (1, 0), 0, 0, half(), "a[0]")
            .is_err());
        // The caller lent all it had.
        let e = p
            .step(PermOp::Lend, (0, 0), 0, 0, half(), "a[0]")
            .unwrap_err();
        assert_eq!(e[1], "held 0");
    }
}
