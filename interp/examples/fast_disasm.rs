//! Prints the fast executor's bytecode for a kernel: `fast_disasm FILE.ksim n`.
use std::sync::Arc;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let src = std::fs::read_to_string(&a[0]).unwrap();
    let k = lang::check::compile(&src).map_err(|e| format!("{e:?}")).unwrap();
    let opts = interp::LaunchOptions {
        defines: vec![("n".into(), a.get(1).cloned().unwrap_or("8".into()))],
        ..Default::default()
    };
    let l = interp::Launch::new(Arc::new(k), &opts).unwrap();
    print!("{}", interp::fast::disassemble(&l).unwrap());
}
