// A matrix copied into a larger one, zeros outside: the pre- and post-pass of a
// kernel that needs rows of a multiple of 4 floats on a shape that has none.
// Not a rung. One block row per destination row: grid (ceil(DST_COLS / 256), DST_ROWS).
// Padding the reduction index with zeros adds nothing to any product, and
// padded columns of C are computed and then not copied back.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256) pad_copy(const float* __restrict__ src,
                                                          float* __restrict__ dst, int ROWS, int COLS,
                                                          int LD_SRC, int DST_ROWS, int DST_COLS) {
    const int r = blockIdx.y, c = blockIdx.x * 256 + threadIdx.x;
    if (r >= DST_ROWS || c >= DST_COLS) return;
    dst[(size_t)r * DST_COLS + c] = r < ROWS && c < COLS ? src[(size_t)r * LD_SRC + c] : 0.0f;
}
