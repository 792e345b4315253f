// Pre-passes of the wgmma rungs: operands made TF32 and laid out the way wgmma
// reads them. Not a rung: each of these is one streaming pass over an operand.
//
// * B (N×K, row-major) becomes Bᵀ (K rows of N, padded to LDN): TF32 wgmma reads
//   both shared-memory operands with the reduction index contiguous, and in B
//   it is not. Values are rounded to TF32 (nearest) on the way.
// * A (M×N) is copied, rounded, into rows of LDN floats: for a rung that wants
//   its operands rounded before the product, or when A's rows cannot be
//   described to TMA (N % 4 != 0 or a misaligned pointer).
// The padding columns are written as zeros, so no pass reads stale values.
#include "common.cuh"

// 64×64 tiles through shared memory, 16 values per thread: B's rows are read
// and Bᵀ's rows written 16 bytes at a time where the shape allows (K % 4 == 0
// and an aligned B for reads; rows of Bᵀ are padded to a multiple of 4, so writes always can),
// so enough bytes are in flight to run at memory speed. The +1 column avoids
// bank conflicts on the column-wise reads.
extern "C" __global__ void __launch_bounds__(256) transpose_tf32(const float* __restrict__ B,
                                                                float* __restrict__ Bt, int N,
                                                                int K, int LDN) {
    __shared__ float tile[64][65];  // tile[n][k]
    const int k0 = blockIdx.x * 64, n0 = blockIdx.y * 64;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const bool vec = K % 4 == 0 && reinterpret_cast<size_t>(B) % 16 == 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int n = n0 + ty + 16 * i, k = k0 + 4 * tx;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (n < N) {
            const float* src = &B[(size_t)n * K + k];
            if (vec && k < K) {
                const float4 x = *reinterpret_cast<const float4*>(src);
                v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
            } else {
                for (int j = 0; j < 4; ++j) v[j] = k + j < K ? src[j] : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) tile[ty + 16 * i][4 * tx + j] = __uint_as_float(tf32_bits(v[j]));
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int k = k0 + ty + 16 * i, n = n0 + 4 * tx;
        if (k >= K || n >= LDN) continue;
        // Columns past N are the padding: zeros (the tile holds zeros there).
        const float4 x = make_float4(tile[4 * tx][ty + 16 * i], tile[4 * tx + 1][ty + 16 * i],
                                     tile[4 * tx + 2][ty + 16 * i], tile[4 * tx + 3][ty + 16 * i]);
        *reinterpret_cast<float4*>(&Bt[(size_t)k * LDN + n]) = x;
    }
}

// One block row per matrix row: grid (ceil(LDN / 256), ROWS).
extern "C" __global__ void __launch_bounds__(256) round_rows_tf32(const float* __restrict__ src,
                                                                 float* __restrict__ dst, int ROWS,
                                                                 int COLS, int LDN) {
    const int r = blockIdx.y, c = blockIdx.x * 256 + threadIdx.x;
    if (r >= ROWS || c >= LDN) return;
    dst[(size_t)r * LDN + c] = c < COLS ? __uint_as_float(tf32_bits(src[(size_t)r * COLS + c])) : 0.0f;
}
