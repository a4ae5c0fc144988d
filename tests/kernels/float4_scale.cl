// Each work-item scales its float4 element and swaps its halves; with -D RACY every
// work-item also writes component y of element 0.
__kernel void scale(__global float4 *v, float k) {
  size_t i = get_global_id(0);
  float4 x = v[i] * k;
  v[i] = (float4)(x.hi, x.lo);
#ifdef RACY
  v[0].y = (float)i;
#endif
}
