// Racy: each work-item reads its neighbour's slot of local memory with no barrier after
// the neighbour wrote it. Launched by rotate_racy.sim (Oclgrind's simulator format).
__kernel void rotate(__global int *data, __local int *tmp) {
    size_t l = get_local_id(0);
    size_t g = get_global_id(0);
    tmp[l] = data[g];
    data[g] = tmp[(l + 1) % get_local_size(0)];
}
