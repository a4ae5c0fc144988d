// A 2D NDRange transposing a matrix through a __local tile, with pointers into the tile
// and the output (tests/cl_mem.rs). Launch: --global 4,2 --local 2,2 (a 4 x 2 matrix).
// With -D RACY the barrier is missing: work-items read tile elements others write.
kernel void transpose(__global const int *in, __global int *out) {
    __local int tile[4];
    int lx = get_local_id(0), ly = get_local_id(1);
    int gx = get_global_id(0), gy = get_global_id(1);
    int w = get_global_size(0), h = get_global_size(1);
    __local int *row = tile + 2 * ly;
    row[lx] = in[gy * w + gx];
#ifndef RACY
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    // Work-item (lx, ly) writes the element that work-item (ly, lx) loaded.
    int x = get_group_id(0) * 2 + ly;
    __global int *dst = out + x * h;
    dst[lx] = tile[2 * lx + ly];
}
