// ksim's CUDA header: the declarations of the CUDA built-ins that kernels use, for clang's
// type check. Shipped in the binary, written to a folder passed with `-isystem` (so that
// `<cuda.h>`, `<cuda_runtime.h>` and `<stdio.h>` resolve to it) and passed with `-include`.
// The converter (`cuda.rs`) maps each name to the OpenCL built-in the lowering knows.
#pragma once
typedef __SIZE_TYPE__ size_t;
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __restrict__ __restrict
#define __align__(N) __attribute__((aligned(N)))
typedef unsigned int uint;
#define warpSize 32
#define NULL 0
struct uint3 { unsigned int x, y, z; };
// CUDA's vector types of 2 and 4 elements as clang's vectors (OpenCL C's `int4`, which the
// converter knows): `v.x`, `v.w` and `{a, b, c, d}` read as CUDA's structs do. The 3-element
// types are not declared: CUDA's `float3` is 12 bytes, a vector of 3 is 16.
#define __ksim_vec(T, N) typedef T N##2 __attribute__((ext_vector_type(2))); \
  typedef T N##4 __attribute__((ext_vector_type(4)));
__ksim_vec(char, char) __ksim_vec(unsigned char, uchar) __ksim_vec(short, short)
__ksim_vec(unsigned short, ushort) __ksim_vec(int, int) __ksim_vec(unsigned int, uint)
__ksim_vec(long, long) __ksim_vec(unsigned long, ulong) __ksim_vec(float, float)
__ksim_vec(double, double)
// `make_int4(x, y, z, w)`: a vector literal, each argument converted to the element type
// (as the arguments of CUDA's functions are).
#define make_char2(a, b) ((char2){(char)(a), (char)(b)})
#define make_char4(a, b, c, d) ((char4){(char)(a), (char)(b), (char)(c), (char)(d)})
#define make_uchar2(a, b) ((uchar2){(unsigned char)(a), (unsigned char)(b)})
#define make_uchar4(a, b, c, d) ((uchar4){(unsigned char)(a), (unsigned char)(b), (unsigned char)(c), (unsigned char)(d)})
#define make_short2(a, b) ((short2){(short)(a), (short)(b)})
#define make_short4(a, b, c, d) ((short4){(short)(a), (short)(b), (short)(c), (short)(d)})
#define make_ushort2(a, b) ((ushort2){(unsigned short)(a), (unsigned short)(b)})
#define make_ushort4(a, b, c, d) ((ushort4){(unsigned short)(a), (unsigned short)(b), (unsigned short)(c), (unsigned short)(d)})
#define make_int2(a, b) ((int2){(int)(a), (int)(b)})
#define make_int4(a, b, c, d) ((int4){(int)(a), (int)(b), (int)(c), (int)(d)})
#define make_uint2(a, b) ((uint2){(unsigned int)(a), (unsigned int)(b)})
#define make_uint4(a, b, c, d) ((uint4){(unsigned int)(a), (unsigned int)(b), (unsigned int)(c), (unsigned int)(d)})
#define make_long2(a, b) ((long2){(long)(a), (long)(b)})
#define make_long4(a, b, c, d) ((long4){(long)(a), (long)(b), (long)(c), (long)(d)})
#define make_ulong2(a, b) ((ulong2){(unsigned long)(a), (unsigned long)(b)})
#define make_ulong4(a, b, c, d) ((ulong4){(unsigned long)(a), (unsigned long)(b), (unsigned long)(c), (unsigned long)(d)})
#define make_float2(a, b) ((float2){(float)(a), (float)(b)})
#define make_float4(a, b, c, d) ((float4){(float)(a), (float)(b), (float)(c), (float)(d)})
#define make_double2(a, b) ((double2){(double)(a), (double)(b)})
#define make_double4(a, b, c, d) ((double4){(double)(a), (double)(b), (double)(c), (double)(d)})
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int x = 1, unsigned int y = 1, unsigned int z = 1)
      : x(x), y(y), z(z) {}
};
// The built-in variables: the converter reads `threadIdx.x` as the local id 0, ...
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
// `__syncthreads` is a clang built-in.
__device__ void __threadfence(void); __device__ void __threadfence_block(void);
__device__ void __threadfence_system(void);
// Cooperative groups: a block (its `sync` is `__syncthreads`); the grid's is refused.
namespace cooperative_groups {
struct thread_block { __device__ void sync() const; };
struct grid_group { __device__ void sync() const; };
__device__ thread_block this_thread_block();
__device__ grid_group this_grid();
__device__ void synchronize(thread_block);
__device__ void synchronize(grid_group);
}
#define __ksim_atomic2(NAME) \
  __device__ int NAME(int *, int); \
  __device__ unsigned int NAME(unsigned int *, unsigned int); \
  __device__ unsigned long long NAME(unsigned long long *, unsigned long long);
__ksim_atomic2(atomicAdd) __ksim_atomic2(atomicSub) __ksim_atomic2(atomicExch)
__ksim_atomic2(atomicMin) __ksim_atomic2(atomicMax) __ksim_atomic2(atomicAnd)
__ksim_atomic2(atomicOr) __ksim_atomic2(atomicXor)
__device__ float atomicAdd(float *, float);
__device__ float atomicExch(float *, float);
__device__ unsigned int atomicInc(unsigned int *, unsigned int);
__device__ unsigned int atomicDec(unsigned int *, unsigned int);
__device__ int atomicCAS(int *, int, int);
__device__ unsigned int atomicCAS(unsigned int *, unsigned int, unsigned int);
__device__ unsigned long long atomicCAS(unsigned long long *, unsigned long long, unsigned long long);
// Math.
#define __ksim_f1(NAME) __device__ float NAME##f(float); __device__ double NAME(double);
#define __ksim_f2(NAME) __device__ float NAME##f(float, float); __device__ double NAME(double, double);
__ksim_f1(sqrt) __ksim_f1(rsqrt) __ksim_f1(exp) __ksim_f1(exp2) __ksim_f1(log) __ksim_f1(log2)
__ksim_f1(log10) __ksim_f1(sin) __ksim_f1(cos) __ksim_f1(tan) __ksim_f1(fabs) __ksim_f1(floor)
__ksim_f1(ceil) __ksim_f1(round) __ksim_f1(trunc) __ksim_f1(atan) __ksim_f1(asin)
__ksim_f1(acos) __ksim_f1(tanh) __ksim_f1(sinh) __ksim_f1(cosh) __ksim_f1(cbrt) __ksim_f1(erf)
__ksim_f2(pow) __ksim_f2(fmin) __ksim_f2(fmax) __ksim_f2(fmod) __ksim_f2(atan2) __ksim_f2(hypot)
__ksim_f2(copysign)
__device__ float fmaf(float, float, float); __device__ double fma(double, double, double);
__device__ float __fdividef(float, float); __device__ float __expf(float);
__device__ float __logf(float); __device__ float __sinf(float); __device__ float __cosf(float);
__device__ float __powf(float, float);
__device__ float __exp10f(float); __device__ float exp10f(float);
#define __ksim_minmax(NAME) \
  __device__ int NAME(int, int); __device__ unsigned int NAME(unsigned int, unsigned int); \
  __device__ long long NAME(long long, long long); \
  __device__ unsigned long long NAME(unsigned long long, unsigned long long); \
  __device__ float NAME(float, float); __device__ double NAME(double, double);
__ksim_minmax(min) __ksim_minmax(max)
__device__ int abs(int);
__device__ int __mul24(int, int); __device__ unsigned int __umul24(unsigned int, unsigned int);
__device__ int __popc(unsigned int); __device__ int __popcll(unsigned long long);
__device__ int __clz(int); __device__ int __clzll(long long);
__device__ void *memcpy(void *, const void *, size_t);
__device__ void *memset(void *, int, size_t);
// Variadic functions are not device code: variadic templates are.
template <class... A> __device__ int printf(const char *, A...);
// GPUVerify's specification built-ins.
__device__ void __requires(bool); __device__ void __ensures(bool); __device__ void __assert(bool);
__device__ void __assume(bool); __device__ void __invariant(bool);
__device__ void __global_requires(bool); __device__ void __global_ensures(bool);
__device__ void __global_assert(bool); __device__ void __global_invariant(bool);
__device__ void __candidate_invariant(bool); __device__ void __candidate_global_invariant(bool);
__device__ void __function_wide_invariant(bool);
__device__ void __function_wide_candidate_invariant(bool);
__device__ bool __implies(bool, bool); __device__ bool __is_pow2(unsigned long long);
__device__ bool __no_read(const volatile void *); __device__ bool __no_write(const volatile void *);
__device__ bool __read(const volatile void *); __device__ bool __write(const volatile void *);
__device__ bool __read_implies(const volatile void *, bool);
__device__ bool __write_implies(const volatile void *, bool);
__device__ size_t __read_offset_bytes(const volatile void *);
__device__ size_t __write_offset_bytes(const volatile void *);
__device__ size_t __ptr_offset_bytes(const volatile void *);
__device__ bool __ptr_base(const volatile void *);
__device__ void __requires_fresh_array(const volatile void *);
__device__ bool __atomic(const volatile void *);
__device__ bool __enabled(void); __device__ bool __same_group(void);
__device__ int __other_int(int); __device__ bool __other_bool(bool);
__device__ bool __uniform_int(int); __device__ bool __uniform_bool(bool);
__device__ bool __distinct_int(int); __device__ bool __all(bool);
__device__ int __return_val_int(void); __device__ bool __return_val_bool(void);
template <class T> __device__ T __ksim_return_val(void);
#define __return_val_funptr(T) __ksim_return_val<T>()
template <class... A> __device__ void __barrier_invariant(bool, A...);
template <class... A> __device__ void __barrier_invariant_binary(bool, A...);
// curand (GPUVerify's `cuda.h` declares it too): declared so that a kernel using it parses,
// and is then refused by name (its states are the library's, not the kernel's memory).
struct curandState { unsigned int d; };
typedef curandState curandState_t;
struct curandStateMtgp32 { unsigned int d; };
typedef curandStateMtgp32 curandStateMtgp32_t;
__device__ void curand_init(unsigned long long, unsigned long long, unsigned long long,
                            curandState *);
__device__ unsigned int curand(curandState *);
__device__ unsigned int curand(curandStateMtgp32 *);
__device__ float curand_uniform(curandState *);
__device__ float curand_uniform(curandStateMtgp32 *);
__device__ float curand_normal(curandState *);
__device__ float curand_normal(curandStateMtgp32 *);
// Textures and surfaces: declared so that a kernel using them parses, and is then refused
// by name.
enum cudaTextureReadMode { cudaReadModeElementType, cudaReadModeNormalizedFloat };
// A texture reference is a variable kernels read (`__device__`).
template <class T, int dim = 1, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct __ksim_texture { int normalized; };
#define texture __device__ __ksim_texture
template <class T> __device__ T tex1Dfetch(__ksim_texture<T, 1, cudaReadModeElementType>, int);
template <class T> __device__ T tex1D(__ksim_texture<T, 1, cudaReadModeElementType>, float);
template <class T> __device__ T tex2D(__ksim_texture<T, 2, cudaReadModeElementType>, float, float);
template <class T, int dim = 1> struct __ksim_surface { int type; };
#define surface __device__ __ksim_surface
