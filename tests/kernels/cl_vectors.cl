// Vector buffers through ksim's CLI (tests/cl_vectors_buf.rs): a `float4` buffer copied to
// `__local` memory by an async copy, read back through a `float4` pointer variable and a
// `float *` view of its components, and permuted by `shuffle` with a by-value `uint4` mask.
// -D RACY reads the copy's destination before waiting for it (a race with the copy at the
// wait).
kernel void k(__global float4 *in, __global float4 *out, __global float *first, uint4 mask) {
    __local float4 tile[4];
    size_t l = get_local_id(0);
    size_t g = get_group_id(0);
    __global float4 *src = in + 4 * g;
    event_t e = async_work_group_copy(tile, src, 4, 0);
#ifdef RACY
    if (l == 0) out[get_global_id(0)] = tile[1];
#endif
    wait_group_events(1, &e);
    barrier(CLK_LOCAL_MEM_FENCE);
    __global float *f = (__global float *)in;
    first[get_global_id(0)] = f[4 * get_global_id(0)];
    out[get_global_id(0)] = shuffle(tile[l], mask) * 2.0f;
}
