use lang::*;

#[test]
fn explore() {
    let srcs = [
        "// Kogge-Stone inclusive scan\nkernel kogge_stone(const local T in[n], local T out[n]) launch(groups = 1, local_size = n) {\n    out[tid] = in[tid];\n    barrier();\n    for (int offset = 1; offset < n; offset *= 2) {\n        T temp;\n        if (tid >= offset) temp = out[tid - offset];\n        barrier();\n        if (tid >= offset) out[tid] = temp ⊕ out[tid];\n        barrier();\n    }\n}\n",
        "kernel k(local T tree[log2(n) + 1][n]) { tree[d][i] <+>= tree[d - 1][2 * i]; }",
        "kernel k() { x = 1 }",
        "kernel k() { a = 1 b = 2; c = 3; d = 4 e = 5; }",
        "kernel k() { break; return x; switch (x) { case 1: y = 2; } do { x++; } while (x < 3); goto l; continue; }",
        "kernel k() { x = *p; y = &x; x = y = z; ++x; f(x); if (x = 1) y = 2; z = x++; }",
        "kernel k() {} void f() {}",
        "",
        "kernel k(global int *p) { int a[4]; int b, c; const int z = 1; barrier(CLK); ; }",
        "kernel k() { x = (bool) y; x = a[1][2][3]; x = 99999999999999999999999; }",
        "kernel k() { if (a b) { x = ; } while (c) y = 1 }",
        "kernel k(",
        "kernel k() { x = 1;",
        "kernel k() launch(foo = 1) {}",
        "kernel k() { x = @; }",
    ];
    for s in srcs {
        match parse(s) {
            Ok(k) => println!("OK:\n{}", print_kernel(&k)),
            Err(ds) => {
                println!("ERR for {s:?}:");
                print!("{}", render(&ds, "t.ksim", s, false));
            }
        }
    }
}
