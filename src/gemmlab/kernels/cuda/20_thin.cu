// Thin outputs: C of at most THIN rows (thin_rows) or THIN columns (thin_cols). Such a product is
// a few dot products per element of the long operand, so its time is reading that operand (B for
// thin rows, A for thin columns) and the latency of the loads before the first add. A tile of C,
// as `small` has, would leave most of its threads without an output; here every thread reads its
// own stream of the long operand and keeps one sum per row (or column) of C, THIN of them.
//
// thin_rows (M ≤ THIN): a block is 8 warps over 32 columns of C. Lane l owns column 32·x + l; the
// warps split the block's share of the reduction n by n (warp w takes n ≡ w mod 8), so a warp's
// loads of B are one row segment of 128 bytes, and A's M values at n are the same for every lane
// (one broadcast). The 8 warps' sums meet in shared memory, added in warp order.
//
// thin_cols (K ≤ THIN): a block is 8 warps over 8 rows of C, one row a warp. The lanes walk the row
// of A 32 floats at a time (128 bytes a load) and read B's K values at each n (B is at most THIN
// floats a row, from L1 after the first warps). The lanes' sums meet in a butterfly of shuffles.
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
#ifndef FAN
#define FAN 8
#endif
#define WARPS 8
#define THREADS (WARPS * 32)
// The threads whose sums a split-K slot holds: warp 0 (thin_rows), one thread a row (thin_cols).
// A slot of every thread's would move 8 to 32 times the data (1,899 slots of 8 KB at 5057×753×4).
#define SLOT_ROWS 32
#define SLOT_COLS WARPS
static_assert(THIN % 4 == 0, "the split-K tree moves a thread's sums 16 bytes at a time");

#include "splitk.cuh"

// This part's share [first, last) of the reduction, in whole steps of `step` elements of N.
__device__ __forceinline__ void part_range(int N, int step, int& first, int& last) {
    const int steps = (N + step - 1) / step;
    first = steps * blockIdx.z / gridDim.z * step;
    last = min(N, steps * (blockIdx.z + 1) / gridDim.z * step);
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    thin_rows(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ float sums[WARPS][THIN][32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int col = blockIdx.x * 32 + lane;
    int first, last;
    part_range(N, WARPS, first, last);

    float acc[THIN];
#pragma unroll
    for (int i = 0; i < THIN; ++i) acc[i] = 0.0f;
    if (col < K) {
#pragma unroll 4  // 8 spills: every unrolled step holds THIN values of A
        for (int n = first + warp; n < last; n += WARPS) {
            const float b = __ldg(&B[(size_t)n * K + col]);
#pragma unroll
            for (int i = 0; i < THIN; ++i)
                if (i < M) acc[i] = fmaf(__ldg(&A[(size_t)i * N + n]), b, acc[i]);
        }
    }
    // Warp 0 adds the 8 warps' sums for its lane's column, in warp order; it alone takes part in the
    // split-K tree with them (SLOT_ROWS threads' sums a slot), and stores them.
#pragma unroll
    for (int i = 0; i < THIN; ++i) sums[warp][i][lane] = acc[i];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int i = 0; i < THIN; ++i) {
            acc[i] = sums[0][i][lane];
#pragma unroll
            for (int w = 1; w < WARPS; ++w) acc[i] += sums[w][i][lane];
        }
    }
    if (gridDim.z > 1 &&
        !splitk::combine<THIN, SLOT_ROWS, FAN, true>(acc, work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                                     blockIdx.z, gridDim.z))
        return;
    if (warp == 0 && col < K) {
#pragma unroll
        for (int i = 0; i < THIN; ++i)
            if (i < M) C[(size_t)i * K + col] = acc[i];
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    thin_cols(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ float rows[WARPS][THIN];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row = blockIdx.y * WARPS + warp;
    int first, last;
    part_range(N, 32, first, last);

    float acc[THIN];
#pragma unroll
    for (int j = 0; j < THIN; ++j) acc[j] = 0.0f;
    if (row < M) {
        const float* a = A + (size_t)row * N;
#pragma unroll 8
        for (int n = first + lane; n < last; n += 32) {
            const float x = __ldg(a + n);
            const float* b = B + (size_t)n * K;
#pragma unroll
            for (int j = 0; j < THIN; ++j)
                if (j < K) acc[j] = fmaf(x, __ldg(b + j), acc[j]);
        }
    }
    // The lanes' sums in a butterfly: lane 0's result is added in a fixed order. Then thread w holds
    // warp w's row: the block's 8 rows sit in SLOT_COLS threads for the split-K tree and the store.
#pragma unroll
    for (int j = 0; j < THIN; ++j)
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) acc[j] += __shfl_xor_sync(0xffffffffu, acc[j], offset);
    if (lane == 0) {
#pragma unroll
        for (int j = 0; j < THIN; ++j) rows[warp][j] = acc[j];
    }
    __syncthreads();
    if (threadIdx.x < WARPS) {
#pragma unroll
        for (int j = 0; j < THIN; ++j) acc[j] = rows[threadIdx.x][j];
    }
    if (gridDim.z > 1 &&
        !splitk::combine<THIN, SLOT_COLS, FAN, true>(acc, work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                                     blockIdx.z, gridDim.z))
        return;
    const int mine = blockIdx.y * WARPS + threadIdx.x;
    if (threadIdx.x < WARPS && mine < M) {
#pragma unroll
        for (int j = 0; j < THIN; ++j)
            if (j < K) C[(size_t)mine * K + j] = acc[j];
    }
}
