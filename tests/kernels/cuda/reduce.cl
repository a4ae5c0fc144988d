// The OpenCL C twin of reduce.cu.
#define BLOCK 8

__kernel void reduce(__global const int *in, __global int *out) {
  __local int partial[BLOCK];
  uint t = get_local_id(0);
  partial[t] = in[get_group_id(0) * get_local_size(0) + t];
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (t < s) {
      partial[t] += partial[t + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  if (t == 0) {
    out[get_group_id(0)] = partial[0];
  }
}
