// long/ulong arithmetic wrapping at 64 bits (tests/cl_scalar_types.rs).
kernel void longs(__global long *l, __global ulong *u) {
    int i = get_global_id(0);
    long x = l[i];
    l[i] = x * 4000000007L + (1L << 40) - (x >> 3);
    u[i] = (ulong)x * 0x9E3779B97F4A7C15UL ^ (u[i] >> 7);
}
