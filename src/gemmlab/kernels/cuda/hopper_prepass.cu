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

// 32×32 tiles through shared memory: coalesced reads along B's rows and
// coalesced writes along Bᵀ's rows; the +1 column avoids bank conflicts.
extern "C" __global__ void __launch_bounds__(256) transpose_tf32(const float* __restrict__ B,
                                                                float* __restrict__ Bt, int N,
                                                                int K, int LDN) {
    __shared__ float tile[32][33];
    const int k0 = blockIdx.x * 32, n0 = blockIdx.y * 32;
    for (int i = threadIdx.y; i < 32; i += 8) {
        const int n = n0 + i, k = k0 + threadIdx.x;
        tile[i][threadIdx.x] = (n < N && k < K) ? __uint_as_float(tf32_bits(B[(size_t)n * K + k])) : 0.0f;
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
        const int k = k0 + i, n = n0 + threadIdx.x;
        if (k < K && n < LDN) Bt[(size_t)k * LDN + n] = tile[threadIdx.x][i];
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
