typedef struct { int a; int b; } Pair;
typedef struct { Pair p; int2 v; int c; } Box;

Pair make(int a, int b) { Pair r = {a, b}; return r; }
Pair swap(Pair x) { Pair r; r.a = x.b; r.b = x.a; return r; }
int sum(Box b) { return b.p.a + b.p.b + b.v.x + b.v.y + b.c; }
void bump(Pair *p, int k) { p->a += k; p->b += k; }

kernel void k(global int *out) {
  int i = get_global_id(0);
  Pair p = make(i, 10 * i);
  Pair q = swap(p);
  bump(&q, 1);
  Box b = {q, (int2)(i, 2), 7};
  Box z = {{1}};
  Box c;
  c = b;
  c.p = swap(c.p);
  out[4 * i + 0] = sum(b);
  out[4 * i + 1] = sum(z);
  out[4 * i + 2] = c.p.a * 1000 + c.p.b;
  out[4 * i + 3] = q.a;
}
