// GPUVerify's __assert checked at run time: with 4 work-items, work-item 3 has x = 6.
__kernel void k(__global int *A) {
    int x = get_local_id(0) * 2;
    __assert(x < 6);
    A[get_local_id(0)] = x;
}
