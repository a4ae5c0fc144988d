// The OpenCL C twin of atomic_wrap.cu: CUDA's atomicInc/atomicDec written as
// compare-and-swap loops.
__kernel void wrap(__global uint *ring, __global uint *down, __global uint *got) {
  uint i = get_global_id(0);
  uint old;
  do {
    old = atomic_or(ring, 0);
  } while (atomic_cmpxchg(ring, old, old >= 2 ? 0 : old + 1) != old);
  got[i] = old;
  do {
    old = atomic_or(down, 0);
  } while (atomic_cmpxchg(down, old, (old == 0 || old > 5) ? 5 : old - 1) != old);
}
