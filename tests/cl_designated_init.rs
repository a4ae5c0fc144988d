//! Designated initialisers on the clang front end (the one `.cu` files always take):
//! members left out before a designated one are zeros and the items after them keep their
//! places. clang writes them as `ImplicitValueInitExpr`; dropping them shifted the later
//! items forward (`int a[4] = {[2] = 5}` gave `a[0] = 5`). Skipped without clang-15.

mod common;
use common::{has_clang, ksim_in};

const KERNEL: &str = r#"
typedef struct { int x; int y; int z; } S;
__kernel void k(__global int *o) {
    if (get_global_id(0) != 0) return;
    int a[4] = {[2] = 5};
    S s = {.y = 7};
    S t = {.z = 9, .x = 1};
    int b[5] = {1, [3] = 4};
    o[0] = a[0]; o[1] = a[1]; o[2] = a[2]; o[3] = a[3];
    o[4] = s.x; o[5] = s.y; o[6] = s.z;
    o[7] = t.x; o[8] = t.y; o[9] = t.z;
    o[10] = b[0]; o[11] = b[1]; o[12] = b[2]; o[13] = b[3]; o[14] = b[4];
}
"#;

#[test]
fn members_left_out_before_a_designated_one_are_zeros() {
    if !has_clang() {
        eprintln!("skipped: no clang-15");
        return;
    }
    let d = common::tmp("designated-init");
    std::fs::write(d.join("k.cl"), KERNEL).unwrap();
    for engine in ["reference", "fast"] {
        let o = ksim_in(
            &d,
            &[
                "run",
                "k.cl",
                "--engine",
                engine,
                "--global",
                "1",
                "--local",
                "1",
                "--input",
                "o=zeros:15",
            ],
        );
        assert!(o.status.success(), "{engine}: {}", common::text(&o));
        let out = common::stdout(&o);
        let values = out
            .lines()
            .find_map(|l| l.strip_prefix("o ")?.trim_start().strip_prefix("= "))
            .unwrap_or_else(|| panic!("{engine}: no buffer o: {out}"));
        assert_eq!(values, "0 0 5 0 0 7 0 1 0 9 1 0 0 4 0", "{engine}: {out}");
    }
}
