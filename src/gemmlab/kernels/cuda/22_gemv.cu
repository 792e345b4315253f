// Matrix-vector products: K = 1. B is a column of N floats and C a column of M, so each output
// is the dot product of one row of A with B, and the call is a stream of A's M·N floats. Nothing
// is reused but B (L1 keeps it); the kernel's one job is to keep enough of A's bytes in flight.
// `thin` (20_thin.cu) takes these shapes as one case of K ≤ 8: a lane reads one float of A a
// row at a time, and the butterfly adds all 8 columns it might have had. Here a lane reads A 16
// bytes at a time, several loads ahead, and sums one column.
//
// A block is WARPS warps over WARPS·ROWS rows of C; warp w owns rows (y·WARPS + w)·ROWS + r.
// Rows of A begin wherever row·N falls, so a 16-byte read of row `row` starts where row·N + n is
// a multiple of 4: each row's part of the reduction is a head of fewer than 4 floats, a body of
// whole float4s that the lanes take 128 floats a pass (lane l the 4 at 4l), and a tail of fewer
// than 4. Where N % 4 == 0 and A and B are 16-byte aligned every row's body starts at the part's
// first element, and one float4 of B serves the warp's ROWS rows (`shared_b`); elsewhere each row
// reads B 4 bytes at a time beside its own body (`own_b`). The test is uniform across the grid.
//
// Strict FP32: every product is an FMA into one chain a lane (at most N / 32 of them), the lanes'
// sums meet in a butterfly of fixed order, and where the reduction is split across blocks (grid
// z, cuda/splitgrid.py) the parts meet in splitk.cuh's tree: the same bits every call. Plain loads
// and the tree's acquire-release atomics: any GPU.
#include "common.cuh"

#ifndef ROWS
#define ROWS 2  // rows of C a warp owns
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#ifndef FAN
#define FAN 8
#endif
#define WARPS 8
#define THREADS (WARPS * 32)
#define PASS 128  // floats of a row the 32 lanes read in one pass, 4 each
// A split-K slot holds 4 rows' sums a thread (the tree moves 16 bytes at a time): SAVERS threads.
#define SAVERS (WARPS * ROWS / 4)
static_assert(WARPS * ROWS % 4 == 0, "the split-K tree moves a thread's sums 16 bytes at a time");

#include "splitk.cuh"

__device__ __forceinline__ float4 ldg4(const float* p) { return __ldg(reinterpret_cast<const float4*>(p)); }

__device__ __forceinline__ float dot4(float4 x, float4 b, float acc) {
    acc = fmaf(x.x, b.x, acc);
    acc = fmaf(x.y, b.y, acc);
    acc = fmaf(x.z, b.z, acc);
    return fmaf(x.w, b.w, acc);
}

// Every row's body starts at `first`: one float4 of B a pass for the ROWS rows.
__device__ __forceinline__ void shared_b(const float* const (&row)[ROWS], const float* __restrict__ B, int first,
                                         int last, int lane, float (&acc)[ROWS]) {
    const int body = first + ((last - first) & ~3);
#pragma unroll 4
    for (int n = first + 4 * lane; n < body; n += PASS) {
        const float4 b = ldg4(B + n);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r] = dot4(ldg4(row[r] + n), b, acc[r]);
    }
    if (lane < last - body) {  // N % 4 == 0 leaves a tail only where the part ends at N: none
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r] = fmaf(__ldg(row[r] + body + lane), __ldg(B + body + lane), acc[r]);
    }
}

// Row by row: its head and tail 4 bytes at a time (lanes 0–2), its body by float4s, B 4 bytes at a
// time (L1 hits after the first row of the block).
__device__ __forceinline__ float own_b(const float* __restrict__ row, const float* __restrict__ B, int first,
                                       int last, int lane) {
    const unsigned misaligned = static_cast<unsigned>(reinterpret_cast<unsigned long long>(row + first)) & 15u;
    const int start = first + min(last - first, static_cast<int>(((16u - misaligned) & 15u) >> 2));
    const int body = start + ((last - start) & ~3);
    float acc = 0.0f;
    if (lane < start - first) acc = fmaf(__ldg(row + first + lane), __ldg(B + first + lane), acc);
#pragma unroll 4
    for (int n = start + 4 * lane; n < body; n += PASS) {
        const float4 b = make_float4(__ldg(B + n), __ldg(B + n + 1), __ldg(B + n + 2), __ldg(B + n + 3));
        acc = dot4(ldg4(row + n), b, acc);
    }
    if (lane < last - body) acc = fmaf(__ldg(row + body + lane), __ldg(B + body + lane), acc);
    return acc;
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    gemv(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ float sums[WARPS * ROWS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row0 = (blockIdx.y * WARPS + warp) * ROWS;  // this warp's rows: row0 + r
    int first, last;
    splitk::part_range(N, PASS, first, last);  // whole passes

    // A row past M reads row M − 1 (in bounds; its sum is never stored): no test in the loops.
    const float* row[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) row[r] = A + (size_t)min(row0 + r, M - 1) * N;
    float acc[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) acc[r] = 0.0f;
    const bool aligned = N % 4 == 0 && ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B)) & 15u) == 0;
    if (aligned) {
        shared_b(row, B, first, last, lane, acc);
    } else {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r] = own_b(row[r], B, first, last, lane);
    }
    // The lanes' sums in a butterfly (every lane ends with the same bits), then one float a row.
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], offset);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sums[warp * ROWS + r] = acc[r];
    }
    __syncthreads();
    // Thread t < SAVERS holds the block's rows 4t … 4t + 3 for the split-K tree and the store.
    float mine[4] = {};
    if (threadIdx.x < SAVERS) {
#pragma unroll
        for (int j = 0; j < 4; ++j) mine[j] = sums[4 * threadIdx.x + j];
    }
    if (gridDim.z > 1 &&
        !splitk::combine<4, SAVERS, FAN, true>(mine, work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                               blockIdx.z, gridDim.z))
        return;
    if (threadIdx.x < SAVERS) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int r = blockIdx.y * WARPS * ROWS + 4 * threadIdx.x + j;
            if (r < M) C[r] = mine[j];
        }
    }
}
