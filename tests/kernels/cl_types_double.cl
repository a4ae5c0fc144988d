#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// double arithmetic and conversions (tests/cl_scalar_types.rs).
kernel void doubles(__global double *d, __global float *f, __global int *n) {
    int i = get_global_id(0);
    double x = d[i] * 0.1 + i;
    d[i] = x / 3;
    f[i] = x;                 // rounded to nearest float
    n[i] = (int)(x * -7.5);   // toward zero
}
