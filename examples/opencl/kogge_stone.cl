// Kogge-Stone inclusive prefix sum of one work-group, as OpenCL C.
// ksim run examples/opencl/kogge_stone.cl --global 8 --local 8 --input data=iota:8
#define N 8

__kernel void scan(__global int *data) {
    __local int tmp[N];
    unsigned int t = get_local_id(0);
    tmp[t] = data[t];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int d = 1; d < N; d *= 2) {
        int x = 0;
        if (t >= d) x = tmp[t - d];
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[t] += x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    data[t] = tmp[t];
}
