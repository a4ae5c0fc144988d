// A template kernel: an inclusive scan of one block (Hillis-Steele, double-buffered), with
// a template device function and a reference parameter.
#include <cuda.h>

template <typename T>
__device__ void add_into(T &acc, const T *buf, unsigned int i) {
  acc += buf[i];
}

template <typename T, int N>
__global__ void scan(T *data) {
  __shared__ T buf[2 * N];
  unsigned int t = threadIdx.x;
  int in = 0;
  buf[t] = data[t];
  __syncthreads();
  for (int off = 1; off < N; off *= 2) {
    int out = 1 - in;
    T acc = buf[in * N + t];
    if (t >= off) {
      add_into<T>(acc, buf + in * N, t - off);
    }
    buf[out * N + t] = acc;
    __syncthreads();
    in = out;
  }
  data[t] = buf[in * N + t];
}

template __global__ void scan<int, 8>(int *);
template __global__ void scan<unsigned int, 4>(unsigned int *);
