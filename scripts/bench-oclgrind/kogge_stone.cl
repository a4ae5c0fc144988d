// Kogge-Stone inclusive prefix sum in global memory (examples/opencl/kogge_stone.cl keeps
// its arrays in __local memory, which a launch file cannot fill): one work-group of n
// work-items, `out` holds the scan of `in`. -D RACY drops the barrier between the read of
// out[tid - offset] and the write of out[tid]. Used by scripts/bench-oclgrind.sh.
__kernel void kogge_stone(__global const int *in, __global int *out) {
    unsigned int tid = get_local_id(0);
    unsigned int n = get_local_size(0);
    out[tid] = in[tid];
    barrier(CLK_GLOBAL_MEM_FENCE);
    for (unsigned int offset = 1; offset < n; offset *= 2) {
        int temp = 0;
        if (tid >= offset) temp = out[tid - offset];
#ifndef RACY
        barrier(CLK_GLOBAL_MEM_FENCE);
#endif
        if (tid >= offset) out[tid] = temp + out[tid];
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}
