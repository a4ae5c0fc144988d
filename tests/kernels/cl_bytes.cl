// Byte-level views (docs/language.md, "Byte-level views"): a `__local` int array written
// byte by byte through a `char *` view, read back as ints; a `char` view of a buffer; a
// wider `int` write through a view of a `short` buffer.
kernel void bytes(__global int *a, __global short *s, __global int *out) {
    __local int L[4];
    int l = get_local_id(0);
    L[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    ((__local char *)L)[l] = (char)(l * 17 + 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    __global uchar *c = (__global uchar *)a;
    out[l] = L[l] + c[l];
    ((__global int *)s)[l] = 0x10002 * (l + 1);
}
