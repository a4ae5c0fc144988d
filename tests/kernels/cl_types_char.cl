// char/uchar/short arithmetic: promotion to int, truncation on store (tests/cl_scalar_types.rs).
kernel void chars(__global char *c, __global uchar *u, __global short *s) {
    int i = get_global_id(0);
    char a = c[i];
    c[i] = a * 3 + 100;       // computed in int, stored modulo 2^8 (signed)
    u[i] = (uchar)(a - 1) >> 1;
    s[i] = (short)(a * 1000);
}
