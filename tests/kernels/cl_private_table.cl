// (Not named `mix`: that is an OpenCL built-in, and PoCL then finds no kernel of the name.)
// A private array with an initialiser, a loop over it with computed indices, a private
// scratch array passed to a helper, and a program-scope __constant table read in a helper.
__constant int WEIGHTS[4] = {1, 2, 3, 4};
__constant int SHIFT = 1;

int weight(int i) { return WEIGHTS[i % 4] << SHIFT; }

int sum(int *xs, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += xs[i];
  return s;
}

__kernel void mix_table(__global int *in, __global int *out) {
  int g = get_global_id(0);
  int a[4] = {10, 20, 30, 40};
  int tmp[4];
  for (int i = 0; i < 4; i++) {
    tmp[(i + g) % 4] = a[i] * weight(i) + in[g];
  }
  out[g] = sum(tmp, 4);
}
