// reduce.cu without the barrier between the steps: a step reads what another thread writes.
#include <cuda_runtime.h>

#define BLOCK 8

__global__ void reduce(const int *in, int *out) {
  __shared__ int partial[BLOCK];
  unsigned int t = threadIdx.x;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) {
      partial[t] += partial[t + s];
    }
    // (the barrier between the steps is missing)
  }
  if (t == 0) {
    out[blockIdx.x] = partial[0];
  }
}
