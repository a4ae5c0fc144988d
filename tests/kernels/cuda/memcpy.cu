// In-kernel memcpy and memset: whole elements of one type (structs by member), so that
// each element is bounds- and race-checked; a struct assignment copies too.
struct pair {
  short x;
  short y;
};

__global__ void copy(int *out, const int *in, pair *pout, const pair *pin, unsigned int *fill) {
  unsigned int i = threadIdx.x;
  memcpy(&out[2 * i], &in[2 * i], 2 * sizeof(int));
  memcpy(&pout[i], &pin[i], sizeof(pair));
  unsigned int bytes[2];
  memset(bytes, 0x11 * (i + 1), sizeof(bytes));
  fill[i] = bytes[1];
}
