// Atomics through pointers on a 2D NDRange (tests/cl_mem.rs): every work-item takes a
// ticket from a __local counter and adds it to count[1]; each sets its bit in bits[row].
// Launch: --global 2,4 --local 2,2; the totals are the same under every schedule.
kernel void k(__global int *count, __global uint *bits) {
    __local int n;
    int l = get_local_id(0) + 2 * get_local_id(1);
    if (l == 0) n = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    __global int *c = count + 1;
    atomic_add(c, atomic_inc(&n) + 1);
    atom_or(&bits[get_group_id(1)], 1u << l);
}
