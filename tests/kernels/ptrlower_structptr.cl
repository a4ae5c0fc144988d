typedef struct { float x; float y; } Pt;

float norm2(const global Pt *p) { return p->x * p->x + p->y * p->y; }
void put(global Pt *p, Pt v) { *p = v; }
Pt first(global Pt *p) { return p[0]; }

kernel void k(global Pt *d, global float *out, global Pt *e) {
  int i = get_global_id(0);
  global Pt *p = d + i;
  out[i] = norm2(p) + 100.0f * norm2(&d[i]);
  Pt v = first(p);
  v.x += 1.0f;
  put(e + i, v);
}
