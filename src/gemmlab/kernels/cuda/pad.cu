// A matrix copied into a larger one, zeros outside: the pre- and post-pass of a
// kernel that needs rows of a multiple of 4 floats on a shape that has none.
// Not a rung. One block row per destination row: grid (ceil(DST_COLS / (256·PAD_WIDE)), DST_ROWS).
// Padding the reduction index with zeros adds nothing to any product, and
// padded columns of C are computed and then not copied back.
#include "common.cuh"

// PAD_WIDE: destination columns a thread copies, set by cuda/pad.py (a float4 store where the
// destination's rows allow it, four loads in flight either way: more bytes in flight per thread for
// a streaming pass; one column a thread was slower at every size timed: experiments/tools, pad-width).
static_assert(PAD_WIDE == 4, "pad_copy copies 4 columns a thread");

extern "C" __global__ void __launch_bounds__(256) pad_copy(const float* __restrict__ src,
                                                          float* __restrict__ dst, int ROWS, int COLS,
                                                          int LD_SRC, int DST_ROWS, int DST_COLS) {
    const int r = blockIdx.y, c = (blockIdx.x * 256 + threadIdx.x) * PAD_WIDE;
    if (r >= DST_ROWS || c >= DST_COLS) return;
    const float* from = src + (size_t)r * LD_SRC + c;
    float v[4];
    if (r < ROWS && c + 3 < COLS && LD_SRC % 4 == 0 && reinterpret_cast<size_t>(src) % 16 == 0) {
        const float4 x = *reinterpret_cast<const float4*>(from);
        v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = r < ROWS && c + j < COLS ? from[j] : 0.0f;
    }
    float* to = dst + (size_t)r * DST_COLS + c;
    if (DST_COLS % 4 == 0 && reinterpret_cast<size_t>(dst) % 16 == 0) {
        *reinterpret_cast<float4*>(to) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (c + j < DST_COLS) to[j] = v[j];
    }
}
