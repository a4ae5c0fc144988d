// as_T and a byte view of float data (tests/cl_bitcast.rs): the bits of each float of `f`,
// one byte of each through a `uchar` view, and the float of shifted bits.
kernel void bits(__global float *f, __global uint *u, __global uchar *b, __global float *g) {
    int i = get_global_id(0);
    u[i] = as_uint(f[i]);
    __global uchar *c = (__global uchar *)f;
    b[i] = c[4 * i + 3];
    g[i] = as_float(as_int(f[i]) + (1 << 23));
}
