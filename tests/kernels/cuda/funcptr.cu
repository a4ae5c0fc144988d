// Function pointers to device functions: one given by the launch (`first`, a number: 1 for
// the file's first device function, `twice`), one returned by a helper, one chosen by a
// condition, and calls through them with a value and without one.
typedef int (*op_t)(int);
typedef void (*store_t)(int *, int);

__device__ int twice(int x) { return 2 * x; }
__device__ int square(int x) { return x * x; }
__device__ op_t pick(int i) { return i % 2 == 0 ? twice : square; }
__device__ void put(int *p, int v) { *p = v; }
__device__ void add(int *p, int v) { *p += v; }

__global__ void apply(int *out, const int *in, op_t first) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  op_t f = i == 0 ? first : pick(i);
  store_t s = i < 2 ? put : &add;
  s(&out[i], (*f)(in[i]) + f(1));
}
