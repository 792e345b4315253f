// Thin outputs: C of at most THIN rows (thin_rows) or THIN columns (thin_cols). Such a product is
// a few dot products per element of the long operand, so its time is reading that operand (B for
// thin rows, A for thin columns) and the latency of the loads before the first add. A tile of C,
// as `small` has, would leave most of its threads without an output; here every thread reads its
// own stream of the long operand and keeps one sum per row (or column) of C, THIN of them.
//
// thin_rows (M ≤ THIN): a block is 8 warps over 32·COLS columns of C. Lane l owns columns 32·x + l
// (x < COLS); the warps split the block's share of the reduction n by n (warp w takes n ≡ w mod 8),
// so a warp's loads of B are COLS row segments of 128 bytes, and A's M values at n are the same for
// every lane (one broadcast each), used for COLS columns. The 8 warps' sums meet in shared memory,
// added in warp order.
//
// thin_cols (K ≤ THIN): a block is 8 warps over 8·ROWS rows of C, ROWS rows a warp. The lanes walk
// the warp's rows of A 32 floats at a time (128 bytes a load) and read B's K values at each n once
// for the ROWS rows (B is at most THIN floats a row, from L1 after the first warps). The lanes'
// sums meet in a butterfly of shuffles.
//
// Version 3: a load of the short operand (A's M values, B's K values) serves COLS columns or ROWS
// rows, where version 2 loaded it for each: at 6×3645×2740 and 3126×7755×4 those loads, not the
// bytes of the long operand, bounded the kernels (thin.md).
//
// Either way the reduction is also split across blocks (grid z, SplitGrid's policy), whose parts
// meet in splitk.cuh's tree: no block waits on another, and a fixed order of adds gives the same
// bits every call. Strict FP32: every product is an FMA; the sums are split many ways (lanes or
// warps, then parts), closer to the exact product than one chain.
//
// Any shape and alignment: 4-byte loads only. Plain loads, no cp.async: sm_70 and up.
#include "common.cuh"

#ifndef THIN
#define THIN 8  // rows (thin_rows) or columns (thin_cols) of C at most
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#ifndef COLS
#define COLS 4  // thin_rows: columns of C a lane owns
#endif
#ifndef ROWS
#define ROWS 4  // thin_cols: rows of C a warp owns
#endif
#ifndef FAN
#define FAN 8
#endif
#define WARPS 8
#define THREADS (WARPS * 32)
// The threads whose sums a split-K slot holds: warp 0 (thin_rows), one thread a row (thin_cols).
// A slot of every thread's would move 8 to 32 times the data (1,899 slots of 8 KB at 5057×753×4).
#define SLOT_ROWS 32
#define SLOT_COLS (WARPS * ROWS)
static_assert(THIN % 4 == 0, "the split-K tree moves a thread's sums 16 bytes at a time");

#include "splitk.cuh"

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    thin_rows(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ float sums[WARPS][THIN * COLS][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int col0 = blockIdx.x * 32 * COLS + lane;  // this lane's columns: col0 + 32·x
    int first, last;
    splitk::part_range(N, WARPS, first, last);

    float acc[THIN * COLS];  // acc[i·COLS + x]: row i, column col0 + 32·x
#pragma unroll
    for (int e = 0; e < THIN * COLS; ++e) acc[e] = 0.0f;
    // A column past K reads column K − 1 (in bounds; its sums are never stored): no test in the loop.
    int col[COLS];
#pragma unroll
    for (int x = 0; x < COLS; ++x) col[x] = min(col0 + 32 * x, K - 1);
    // COLS 1: version 2's loop (8 spills at 4 blocks an SM unrolled further). A constant, not the
    // expression: nvcc does not expand macros in a pragma's argument (NVRTC does).
    constexpr int unroll = COLS == 1 ? 4 : 2;
#pragma unroll unroll
    for (int n = first + warp; n < last; n += WARPS) {
        float b[COLS];
#pragma unroll
        for (int x = 0; x < COLS; ++x) b[x] = __ldg(&B[(size_t)n * K + col[x]]);
#pragma unroll
        for (int i = 0; i < THIN; ++i)
            if (i < M) {
                const float a = __ldg(&A[(size_t)i * N + n]);
#pragma unroll
                for (int x = 0; x < COLS; ++x) acc[i * COLS + x] = fmaf(a, b[x], acc[i * COLS + x]);
            }
    }
    // Warp 0 adds the 8 warps' sums for its lane's columns, in warp order; it alone takes part in the
    // split-K tree with them (SLOT_ROWS threads' sums a slot), and stores them.
#pragma unroll
    for (int e = 0; e < THIN * COLS; ++e) sums[warp][e][lane] = acc[e];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int e = 0; e < THIN * COLS; ++e) {
            acc[e] = sums[0][e][lane];
#pragma unroll
            for (int w = 1; w < WARPS; ++w) acc[e] += sums[w][e][lane];
        }
    }
    if (gridDim.z > 1 &&
        !splitk::combine<THIN * COLS, SLOT_ROWS, FAN, true>(acc, work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                                            blockIdx.z, gridDim.z))
        return;
    if (warp == 0) {
#pragma unroll
        for (int x = 0; x < COLS; ++x) {
            const int c = col0 + 32 * x;
            if (c < K) {
#pragma unroll
                for (int i = 0; i < THIN; ++i)
                    if (i < M) C[(size_t)i * K + c] = acc[i * COLS + x];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    thin_cols(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ float rows[WARPS * ROWS][THIN];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row0 = (blockIdx.y * WARPS + warp) * ROWS;  // this warp's rows: row0 + r
    int first, last;
    splitk::part_range(N, 32, first, last);

    float acc[ROWS][THIN];
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int j = 0; j < THIN; ++j) acc[r][j] = 0.0f;
    // A row past M reads row M − 1 (in bounds; its sums are never stored): no test in the loop.
    const float* a[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) a[r] = A + (size_t)min(row0 + r, M - 1) * N;
    constexpr int unroll = ROWS == 1 ? 8 : 2;  // ROWS 1: version 2's loop
#pragma unroll unroll
    for (int n = first + lane; n < last; n += 32) {
        const float* bn = B + (size_t)n * K;
        float b[THIN];
#pragma unroll
        for (int j = 0; j < THIN; ++j) b[j] = j < K ? __ldg(bn + j) : 0.0f;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const float x = __ldg(a[r] + n);
#pragma unroll
            for (int j = 0; j < THIN; ++j)
                if (j < K) acc[r][j] = fmaf(x, b[j], acc[r][j]);
        }
    }
    // The lanes' sums in a butterfly: lane 0's result is added in a fixed order. Then thread t holds
    // the block's row t: its 8·ROWS rows sit in SLOT_COLS threads for the split-K tree and the store.
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int j = 0; j < THIN; ++j)
#pragma unroll
            for (int offset = 16; offset > 0; offset /= 2)
                acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], offset);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
#pragma unroll
            for (int j = 0; j < THIN; ++j) rows[warp * ROWS + r][j] = acc[r][j];
    }
    __syncthreads();
    float mine[THIN] = {};
    if (threadIdx.x < SLOT_COLS) {
#pragma unroll
        for (int j = 0; j < THIN; ++j) mine[j] = rows[threadIdx.x][j];
    }
    if (gridDim.z > 1 &&
        !splitk::combine<THIN, SLOT_COLS, FAN, true>(mine, work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                                     blockIdx.z, gridDim.z))
        return;
    const int row = blockIdx.y * SLOT_COLS + threadIdx.x;
    if (threadIdx.x < SLOT_COLS && row < M) {
#pragma unroll
        for (int j = 0; j < THIN; ++j)
            if (j < K) C[(size_t)row * K + j] = mine[j];
    }
}
