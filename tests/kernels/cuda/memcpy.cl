// The OpenCL C twin of memcpy.cu: its copies written as loops over elements.
struct pair {
  short x;
  short y;
};

__kernel void copy(__global int *out, __global const int *in, __global struct pair *pout,
                   __global const struct pair *pin, __global uint *fill) {
  uint i = get_local_id(0);
  for (int k = 0; k < 2; k++)
    out[2 * i + k] = in[2 * i + k];
  pout[i] = pin[i];
  uint bytes[2];
  for (int k = 0; k < 2; k++)
    bytes[k] = 0x11 * (i + 1) * 0x01010101u;
  fill[i] = bytes[1];
}
