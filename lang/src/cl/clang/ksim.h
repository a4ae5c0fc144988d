// ksim's declarations for clang: GPUVerify's annotation calls and what else ksim's lowering
// knows that OpenCL C does not declare. Shipped in the binary and passed with `-include`.
#define DECLARE_UF_BINARY(NAME, OUT, IN1, IN2) OUT NAME(IN1, IN2)
#define __ksim_over __attribute__((overloadable))
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
bool __ksim_over __is_pow2(unsigned int); bool __ksim_over __is_pow2(unsigned long);
unsigned int __ksim_over __mod_pow2(unsigned int, unsigned int);
int __ksim_over __mod_pow2(int, int);
int __ksim_over __ite(bool, int, int); unsigned int __ksim_over __ite(bool, unsigned int, unsigned int);
bool __ksim_over __ite(bool, bool, bool); float __ksim_over __ite(bool, float, float);
long __ksim_over __ite(bool, long, long); unsigned long __ksim_over __ite(bool, unsigned long, unsigned long);
bool __add_noovfl(int, int); bool __add_noovfl_int(int, int);
bool __add_noovfl_unsigned_int(unsigned int, unsigned int);
__ksim_decl_pred(__read) __ksim_decl_pred(__write)
__ksim_decl_pred(__no_read) __ksim_decl_pred(__no_write)
__ksim_decl_pred(__atomic) __ksim_decl_pred(__atomic_has_taken_value)
__ksim_decl_pred(__ptr_base)
__ksim_decl_offset(__ptr_offset_bytes)
__ksim_decl_offset(__read_offset_bytes) __ksim_decl_offset(__write_offset_bytes)
bool __ksim_over __read_implies(const volatile __global void *, bool);
bool __ksim_over __write_implies(const volatile __global void *, bool);
bool __ksim_over __read_implies(const volatile __local void *, bool);
bool __ksim_over __write_implies(const volatile __local void *, bool);
bool __same_group(void); bool __enabled(void); bool __dominator_enabled(void);
int __other_int(int); bool __other_bool(bool); float __other_float(float);
int __old_int(int); bool __uniform_int(int); bool __uniform_bool(bool);
bool __distinct_int(int); bool __distinct_bool(bool); bool __all(bool); bool __exclusive(bool);
int __return_val_int(void); unsigned int __return_val_uint(void); bool __return_val_bool(void);
float __return_val_float(void);
