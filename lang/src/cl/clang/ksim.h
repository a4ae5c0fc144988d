// ksim's declarations for clang: GPUVerify's annotation calls and what else ksim's lowering
// knows that OpenCL C does not declare. Shipped in the binary and passed with `-include`.
#define DECLARE_UF_BINARY(NAME, OUT, IN1, IN2) OUT NAME(IN1, IN2)
#define __ksim_over __attribute__((overloadable))
// Predicates on a pointer into any address space.
#define __ksim_decl_pred(NAME) \
  bool __ksim_over NAME(const volatile __global void *); \
  bool __ksim_over NAME(const volatile __local void *); \
  bool __ksim_over NAME(const volatile __constant void *); \
  bool __ksim_over NAME(const volatile __private void *);
#define __ksim_decl_offset(NAME) \
  size_t __ksim_over NAME(const volatile __global void *); \
  size_t __ksim_over NAME(const volatile __local void *); \
  size_t __ksim_over NAME(const volatile __constant void *); \
  size_t __ksim_over NAME(const volatile __private void *);
void __requires(bool); void __ensures(bool); void __assert(bool); void __assume(bool);
void __invariant(bool); void __global_requires(bool); void __global_ensures(bool);
void __global_assert(bool); void __global_invariant(bool);
void __candidate_invariant(bool); void __candidate_global_invariant(bool);
void __function_wide_invariant(bool); void __function_wide_candidate_invariant(bool);
void __assert_with_msg(bool, __constant char *);
void __non_temporal_loads_begin(void); void __non_temporal_loads_end(void);
bool __implies(bool, bool);
bool __is_pow2(unsigned long);
// Generic helpers: ksim's lowering types the arguments itself (clang's conversions are
// dropped), so one declaration each is enough for clang's check.
#pragma OPENCL EXTENSION __cl_clang_variadic_functions : enable
unsigned long __mod_pow2(unsigned long, unsigned long);
unsigned long __ite(bool, ...);
void __barrier_invariant(bool, ...); void __barrier_invariant_binary(bool, ...);
#define __ksim_bi(N) void __barrier_invariant_##N(bool, ...); \
  void __barrier_invariant_binary_##N(bool, ...);
__ksim_bi(1) __ksim_bi(2) __ksim_bi(3) __ksim_bi(4) __ksim_bi(5) __ksim_bi(6) __ksim_bi(7) __ksim_bi(8)
__ksim_bi(9) __ksim_bi(10) __ksim_bi(11) __ksim_bi(12) __ksim_bi(13) __ksim_bi(14) __ksim_bi(15) __ksim_bi(16)
__ksim_bi(17) __ksim_bi(18) __ksim_bi(19) __ksim_bi(20) __ksim_bi(21) __ksim_bi(22) __ksim_bi(23) __ksim_bi(24)
__ksim_bi(25) __ksim_bi(26) __ksim_bi(27) __ksim_bi(28) __ksim_bi(29) __ksim_bi(30) __ksim_bi(31) __ksim_bi(32)
bool __add_noovfl(int, ...);
void __array_snapshot(const volatile __local void *, ...);
#pragma OPENCL EXTENSION __cl_clang_variadic_functions : disable
bool __add_noovfl_int(int, int);
bool __add_noovfl_unsigned_int(unsigned int, unsigned int);
__ksim_decl_pred(__read) __ksim_decl_pred(__write)
__ksim_decl_pred(__no_read) __ksim_decl_pred(__no_write)
__ksim_decl_pred(__atomic) __ksim_decl_pred(__reads_from) __ksim_decl_pred(__writes_to)
bool __ksim_over __atomic_has_taken_value(const volatile __global void *, unsigned long, unsigned long);
bool __ksim_over __atomic_has_taken_value(const volatile __local void *, unsigned long, unsigned long);
__ksim_decl_pred(__ptr_base) __ksim_decl_pred(__requires_fresh_array)
__ksim_decl_offset(__ptr_offset_bytes)
__ksim_decl_offset(__read_offset_bytes) __ksim_decl_offset(__write_offset_bytes)
bool __ksim_over __read_implies(const volatile __global void *, bool);
bool __ksim_over __write_implies(const volatile __global void *, bool);
bool __ksim_over __read_implies(const volatile __local void *, bool);
bool __ksim_over __write_implies(const volatile __local void *, bool);
// Written without parentheses.
__constant bool __same_group = true;
bool __enabled(void); bool __dominator_enabled(void);
int __other_int(int); bool __other_bool(bool); float __other_float(float);
int __old_int(int); bool __uniform_int(int); bool __uniform_bool(bool);
bool __distinct_int(int); bool __distinct_bool(bool); bool __all(bool); bool __exclusive(bool);
int __return_val_int(void); unsigned int __return_val_uint(void); bool __return_val_bool(void);
float __return_val_float(void); int2 __return_val_int2(void); int4 __return_val_int4(void);
uint4 __return_val_uint4(void); float4 __return_val_float4(void);
// `__read_permission(int, A[i])` takes a type: written as its size, as the lowering reads it.
#pragma OPENCL EXTENSION __cl_clang_variadic_functions : enable
void __read_permission(unsigned long, ...); void __write_permission(unsigned long, ...);
#pragma OPENCL EXTENSION __cl_clang_variadic_functions : disable
#define __read_permission(T, X) __read_permission(sizeof(T), X)
#define __write_permission(T, X) __write_permission(sizeof(T), X)
__ksim_decl_pred(__reads_from_local) __ksim_decl_pred(__reads_from_global)
__ksim_decl_pred(__writes_to_local) __ksim_decl_pred(__writes_to_global)
bool __ksim_over __atomic_implies(const volatile __global void *, bool);
bool __ksim_over __atomic_implies(const volatile __local void *, bool);
