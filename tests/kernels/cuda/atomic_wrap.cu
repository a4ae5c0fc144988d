// atomicInc and atomicDec with CUDA's wrap-around: a ring counter modulo 3 (limit 2) and a
// countdown from above its limit (9 > 5 wraps to 5 first).
__global__ void wrap(unsigned int *ring, unsigned int *down, unsigned int *got) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  got[i] = atomicInc(ring, 2);
  atomicDec(down, 5);
}
