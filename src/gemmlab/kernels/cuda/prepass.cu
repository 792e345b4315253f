// Pre-passes: operands made TF32 and laid out the way wgmma reads them (the
// wgmma rungs), or transposed as they are (bigtile's A_T path). Not a rung:
// each of these is one streaming pass over an operand.
//
// * B (N×K, row-major) becomes Bᵀ (K rows of N, padded to LDN): TF32 wgmma reads
//   both shared-memory operands with the reduction index contiguous, and in B
//   it is not. Values are rounded to TF32 (nearest) on the way.
// * A (M×N) is copied, rounded, into rows of LDN floats: for a rung that wants
//   its operands rounded before the product, or when A's rows cannot be
//   described to TMA (N % 4 != 0 or a misaligned pointer).
// The padding columns are written as zeros, so no pass reads stale values.
#include "common.cuh"

#ifndef TRANSPOSE_GROUP
#define TRANSPOSE_GROUP 0
#endif

// 64×64 tiles through shared memory, 16 values per thread: B's rows are read
// and Bᵀ's rows written 16 bytes at a time where the shape allows (K % 4 == 0
// and an aligned B for reads; rows of Bᵀ are padded to a multiple of 4, so
// writes always can), so enough bytes are in flight to run at memory speed.
// The +1 column avoids bank conflicts on the column-wise reads.
// SPLIT: write the 3xTF32 planes hi and lo instead of one rounded plane, and
// raise *special where B holds ±Inf or NaN.
template <bool SPLIT, bool ROUND = true>
__device__ __forceinline__ void transpose_planes(const float* __restrict__ B, float* __restrict__ hi,
                                                 float* __restrict__ lo, int* special, int N, int K,
                                                 int LDN) {
    __shared__ float tile[64][65];  // tile[n][k], as read
    // Tile order: GROUP 0 walks along B's rows (k fastest, the grid's x), as the grid
    // lies; GROUP g walks g tiles along k, then down n, so that the blocks running at
    // one time read long runs of B's rows and write long runs of Bᵀ's.
    int kt = blockIdx.x, nt = blockIdx.y;
    if (TRANSPOSE_GROUP > 0) {
        const int id = blockIdx.y * gridDim.x + blockIdx.x, span = TRANSPOSE_GROUP * gridDim.y;
        const int first = id / span * TRANSPOSE_GROUP, width = min(TRANSPOSE_GROUP, gridDim.x - first);
        kt = first + id % span % width;
        nt = id % span / width;
    }
    const int k0 = kt * 64, n0 = nt * 64;
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
        for (int j = 0; j < 4; ++j) tile[ty + 16 * i][4 * tx + j] = v[j];
    }
    __syncthreads();
    bool seen = false;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int k = k0 + ty + 16 * i, n = n0 + 4 * tx;
        if (k >= K || n >= LDN) continue;
        // Columns past N are the padding: zeros (the tile holds zeros there).
        float x[4], h[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) x[j] = tile[4 * tx + j][ty + 16 * i];
        const size_t at = (size_t)k * LDN + n;
        if (SPLIT) {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                h[j] = tf32_hi(x[j]);
                seen |= !finite_bits(x[j]);
            }
            *reinterpret_cast<float4*>(&hi[at]) = make_float4(h[0], h[1], h[2], h[3]);
            *reinterpret_cast<float4*>(&lo[at]) = make_float4(tf32_lo(x[0], h[0]), tf32_lo(x[1], h[1]),
                                                              tf32_lo(x[2], h[2]), tf32_lo(x[3], h[3]));
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) h[j] = ROUND ? __uint_as_float(tf32_bits(x[j])) : x[j];
            *reinterpret_cast<float4*>(&hi[at]) = make_float4(h[0], h[1], h[2], h[3]);
        }
    }
    if (SPLIT && seen) atomicExch(special, 1);
}

extern "C" __global__ void __launch_bounds__(256) transpose_tf32(const float* __restrict__ B,
                                                                float* __restrict__ Bt, int N,
                                                                int K, int LDN) {
    transpose_planes<false>(B, Bt, nullptr, nullptr, N, K, LDN);
}

// FP32 as it is: bigtile's A_T path reads Aᵀ (N rows of pitch(M)) so that a thread's
// values of A for one reduction index are two 16-byte loads.
extern "C" __global__ void __launch_bounds__(256) transpose_fp32(const float* __restrict__ B,
                                                                float* __restrict__ Bt, int N,
                                                                int K, int LDN) {
    transpose_planes<false, false>(B, Bt, nullptr, nullptr, N, K, LDN);
}

extern "C" __global__ void __launch_bounds__(256) transpose_split_tf32(
    const float* __restrict__ B, float* __restrict__ hi, float* __restrict__ lo, int* special, int N,
    int K, int LDN) {
    transpose_planes<true>(B, hi, lo, special, N, K, LDN);
}

// One block row per matrix row: grid (ceil(LDN / 256), ROWS).
extern "C" __global__ void __launch_bounds__(256) round_rows_tf32(const float* __restrict__ src,
                                                                 float* __restrict__ dst, int ROWS,
                                                                 int COLS, int LDN) {
    const int r = blockIdx.y, c = blockIdx.x * 256 + threadIdx.x;
    if (r >= ROWS || c >= LDN) return;
    dst[(size_t)r * LDN + c] = c < COLS ? __uint_as_float(tf32_bits(src[(size_t)r * COLS + c])) : 0.0f;
}

// A copied as it is (FP32) into rows of LDN floats: the 3xTF32 rung splits A
// itself, and needs only rows TMA can describe.
extern "C" __global__ void __launch_bounds__(256) pad_rows(const float* __restrict__ src,
                                                          float* __restrict__ dst, int ROWS, int COLS,
                                                          int LDN) {
    const int r = blockIdx.y, c = blockIdx.x * 256 + threadIdx.x;
    if (r >= ROWS || c >= LDN) return;
    dst[(size_t)r * LDN + c] = c < COLS ? src[(size_t)r * COLS + c] : 0.0f;
}

// Strict FP32 for the 3xTF32 rung's rare case: A or B holds ±Inf or NaN (or A
// a value that rounds past FLT_MAX), where a correction term 0 · ±Inf would
// turn a right ±Inf into NaN. Does nothing
// unless *special is set, so a small grid strides over the 16×16 tiles of C
// (step 1.3's way) and costs one read of the flag per block otherwise.
extern "C" __global__ void __launch_bounds__(256) special_fp32(const int* special, GEMM_ARGS) {
    if (*special == 0) return;
    __shared__ float As[16][17], Bs[16][17];
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;
    const int across = (K + 15) / 16, tiles = across * ((M + 15) / 16);
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int r = (t / across) * 16 + tr, c = (t % across) * 16 + tc;
        float acc = 0.0f;
        for (int n0 = 0; n0 < N; n0 += 16) {
            As[tr][tc] = r < M && n0 + tc < N ? A[(size_t)r * N + n0 + tc] : 0.0f;
            Bs[tr][tc] = n0 + tr < N && c < K ? B[(size_t)(n0 + tr) * K + c] : 0.0f;
            __syncthreads();
#pragma unroll
            for (int j = 0; j < 16; ++j) acc = fmaf(As[tr][j], Bs[j][tc], acc);
            __syncthreads();
        }
        if (r < M && c < K) C[(size_t)r * K + c] = acc;
    }
}

// Clears the 3xTF32 rung's flag before the pre-pass may raise it (one thread).
extern "C" __global__ void __launch_bounds__(1) clear_flag(int* special) { *special = 0; }
