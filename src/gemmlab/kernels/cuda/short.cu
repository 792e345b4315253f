// Short reductions: N ≤ SHORT_N. Then C is the work: M·K floats written once, from a reduction so
// short that A's rows and B's columns for a whole tile of C fit in shared memory at once. Every
// kernel before this one streams the reduction through a pipeline of steps, and a tile that is
// one or two steps long pays the pipeline's fill, its barriers and, at large outputs, a tile of
// 16 or 128 outputs a thread whose stores come last. Here a block loads its A rows and B columns
// whole (one barrier), each thread sums its 8×4 outputs in one chain of N FMAs, and stores them:
// a warp writes 8 rows of 128 consecutive floats, 512 bytes a store instruction.
//
// A block owns a BM×BN = 64×128 tile of C: warp w its rows 8w … 8w + 7, lane l its columns
// 4l … 4l + 3. A's rows of the tile are one run of BM·N consecutive floats in memory (A is
// row-major, N a row): read in order, every float goes to its place n-major (As[n][m]), so a
// thread's 8 values of A at an n are two 16-byte reads, the same for the whole warp (broadcast).
// B's N rows of the tile's 128 columns are read row by row (coalesced) into Bs[n][c]; a thread's
// 4 values are one 16-byte read. Per n a warp then reads 6 wavefronts of shared memory for 32
// FMAs, so the FMA pipe, not shared memory, bounds the arithmetic, and stores bound the call.
//
// Strict FP32: every product is an FMA, one chain of at most SHORT_N per output. Any shape and
// alignment: 4-byte loads; C is stored 16 bytes at a time where K % 4 == 0 and C is 16-byte
// aligned, else a float at a time. Plain loads and stores: any GPU.
#include "common.cuh"

#ifndef SHORT_N
#define SHORT_N 32
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 3  // 79 registers (4 blocks hold it to 64, and ptxas then doubles the FFMAs' register bank conflicts)
#endif
#define BM 64
#define BN 128
#define TM 8
#define TN 4
#define THREADS ((BM / TM) * (BN / TN))
// A's tile n-major, rows of BM + 4 floats: 16-byte reads stay aligned, and the stores of the
// copy, consecutive n for one m, fall 4 banks apart instead of in one.
#define LDA (BM + 4)
static_assert(THREADS == 256 && TM == 8 && TN == 4, "the thread layout below: 8 warps of 8 rows, 32 lanes of 4 columns");

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) short_n(GEMM_ARGS) {
    __shared__ __align__(16) float As[SHORT_N * LDA];  // As[n * LDA + m]
    __shared__ __align__(16) float Bs[SHORT_N * BN];   // Bs[n * BN + c]
    if (N > SHORT_N) return;  // the host's precondition (never past the tiles: C unwritten, judged wrong)
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    // A's rows row0 … row0 + BM − 1: BM·N floats from A + row0·N, fewer at the bottom edge.
    const float* a_tile = A + (size_t)row0 * N;
    const int a_count = min(BM, M - row0) * N;
    for (int e = tid; e < BM * N; e += THREADS) {
        const int m = e / N, n = e - m * N;
        As[n * LDA + m] = e < a_count ? a_tile[e] : 0.0f;
    }
    // B's rows 0 … N − 1, columns col0 … col0 + BN − 1 (zeros past K).
    for (int e = tid; e < N * BN; e += THREADS) {
        const int n = e / BN, c = e % BN;
        Bs[n * BN + c] = col0 + c < K ? B[(size_t)n * K + col0 + c] : 0.0f;
    }
    __syncthreads();

    const int warp = tid / 32, lane = tid % 32;
    const float* as = &As[warp * TM];
    const float* bs = &Bs[lane * TN];
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
#pragma unroll 4
    for (int n = 0; n < N; ++n) {
        const float4 a0 = *reinterpret_cast<const float4*>(&as[n * LDA]);
        const float4 a1 = *reinterpret_cast<const float4*>(&as[n * LDA + 4]);
        const float4 b = *reinterpret_cast<const float4*>(&bs[n * BN]);
        const float av[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float bv[TN] = {b.x, b.y, b.z, b.w};
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }

    const int col = col0 + lane * TN;
    if (col >= K) return;
    // K % 4 == 0 and col % 4 == 0: all four columns are in.
    const bool vec = K % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + warp * TM + i;
        if (row >= M) break;
        float* out = &C[(size_t)row * K + col];
        if (vec) {
            *reinterpret_cast<float4*>(out) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        } else {
#pragma unroll
            for (int j = 0; j < TN; ++j)
                if (col + j < K) out[j] = acc[i][j];
        }
    }
}
