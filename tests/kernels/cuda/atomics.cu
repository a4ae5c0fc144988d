// Atomics: a histogram (atomicAdd), a maximum (atomicMax), a count of the threads that
// got to a slot first (atomicCAS), and bitwise atomics.
__global__ void atomics(const int *in, int *hist, int *best, int *first, unsigned int *bits,
                        unsigned long long *total) {
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  atomicAdd(&hist[v % 4], 1);
  atomicMax(best, v);
  if (atomicCAS(&first[v % 4], 0, (int)i + 1) == 0) {
    atomicSub(&hist[4], 1);
  }
  atomicOr(&bits[0], 1u << (i % 32));
  atomicAnd(&bits[1], ~(1u << (i % 32)));
  atomicAdd(total, (unsigned long long)v);
}
