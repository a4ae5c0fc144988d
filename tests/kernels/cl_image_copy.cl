// Copies image `src` to `dest` through sampler `s` (tests/cl_images.rs):
//   ksim run tests/kernels/cl_image_copy.cl --global 2,2 --local 2,1 \
//     --input src=2x2:iota --input dest=2x2:zeros --arg 's=CLK_ADDRESS_CLAMP_TO_EDGE|CLK_FILTER_NEAREST'
__kernel void copy(__write_only image2d_t dest, __read_only image2d_t src, sampler_t s) {
  int2 at = (int2)(get_global_id(0), get_global_id(1));
  write_imagef(dest, at, read_imagef(src, s, at));
}
