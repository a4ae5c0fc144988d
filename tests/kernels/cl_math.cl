// Float math built-ins on each work-item's elements: ksim computes them within 1 ULP, the
// device within its own OpenCL bounds; `gpu compare` compares within 4 ULP.
__kernel void math(__global float *x, __global float4 *v, __global float *out) {
  size_t i = get_global_id(0);
  float a = x[i] * 0.25f;
  float c;
  out[4 * i] = sqrt(a) + fma(a, a, 1.0f);
  out[4 * i + 1] = exp(a) + log(a + 1.0f);
  out[4 * i + 2] = sincos(a, &c) + c;
  out[4 * i + 3] = pown(a, 3) + floor(a) + fmin(a, 2.0f);
  v[i] = ceil(v[i] * 0.5f);
}
