// Matrix-vector products: K = 1. B is a column of N floats and C a column of M, so each output
// is the dot product of one row of A with B, and the call is a stream of A's M·N floats. Nothing
// is reused but B (L1 keeps it); the kernel's one job is to keep enough of A's bytes in flight.
// `thin` (thin.cu) takes these shapes as one case of K ≤ 8: a lane reads one float of A a
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
// More exact than FP32: the kernel is bound by A's bytes, so arithmetic is cheap here (its cost:
// experiments/gemv-floor), and each row's sum is compensated (Ogita, Rump and Oishi's Dot2): every product's rounding error is recovered
// by an FMA, every addition's by TwoSum, and the errors are added into a second float beside the
// sum. A lane's pair, the butterfly's pairs and the row's final s + c are then as exact as a sum in
// twice FP32's precision rounded once: fewer elements outside LeetGPU's tolerance against the
// float64 product than cuBLAS's one chain (a plain chain a lane did worse than cuBLAS there: gemv.md).
// The rounding intrinsics (__fadd_rn,
// __fmul_rn) are never contracted into FMAs, under any flags. The lanes' pairs meet in a butterfly
// of fixed order, and where the reduction is split across blocks (grid z, cuda/handoff.py) the
// parts' rounded sums meet in splitk.cuh's tree: the same bits every call. Plain loads and the
// tree's acquire-release atomics: any GPU.
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

// A compensated sum: s, and c, the sum of s's rounding errors so far.
struct Sum2 {
    float s = 0.0f, c = 0.0f;
};

// s += x·b, the product's error (exact by FMA) and the addition's (TwoSum, exact for any order of
// its operands, so the butterfly's partners get the same bits) into c.
__device__ __forceinline__ void add_product(Sum2& acc, float x, float b) {
    const float p = __fmul_rn(x, b);
    const float product_error = __fmaf_rn(x, b, -p);
    const float t = __fadd_rn(acc.s, p);
    const float z = __fsub_rn(t, acc.s);
    const float sum_error = __fadd_rn(__fsub_rn(acc.s, __fsub_rn(t, z)), __fsub_rn(p, z));
    acc.s = t;
    acc.c = __fadd_rn(acc.c, __fadd_rn(sum_error, product_error));
}

// Two compensated sums into one: TwoSum of the sums, their errors added.
__device__ __forceinline__ void add_sum(Sum2& acc, Sum2 other) {
    const float t = __fadd_rn(acc.s, other.s);
    const float z = __fsub_rn(t, acc.s);
    const float sum_error = __fadd_rn(__fsub_rn(acc.s, __fsub_rn(t, z)), __fsub_rn(other.s, z));
    acc.s = t;
    acc.c = __fadd_rn(__fadd_rn(acc.c, other.c), sum_error);
}

__device__ __forceinline__ void dot4(float4 x, float4 b, Sum2& acc) {
    add_product(acc, x.x, b.x);
    add_product(acc, x.y, b.y);
    add_product(acc, x.z, b.z);
    add_product(acc, x.w, b.w);
}

// Every row's body starts at `first`: one float4 of B a pass for the ROWS rows.
__device__ __forceinline__ void shared_b(const float* const (&row)[ROWS], const float* __restrict__ B, int first,
                                         int last, int lane, Sum2 (&acc)[ROWS]) {
    const int body = first + ((last - first) & ~3);
#pragma unroll 4
    for (int n = first + 4 * lane; n < body; n += PASS) {
        const float4 b = ldg4(B + n);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) dot4(ldg4(row[r] + n), b, acc[r]);
    }
    if (lane < last - body) {  // N % 4 == 0 leaves a tail only where the part ends at N: none
#pragma unroll
        for (int r = 0; r < ROWS; ++r) add_product(acc[r], __ldg(row[r] + body + lane), __ldg(B + body + lane));
    }
}

// Row by row: its head and tail 4 bytes at a time (lanes 0–2), its body by float4s, B 4 bytes at a
// time (L1 hits after the first row of the block).
__device__ __forceinline__ Sum2 own_b(const float* __restrict__ row, const float* __restrict__ B, int first,
                                       int last, int lane) {
    const unsigned misaligned = static_cast<unsigned>(reinterpret_cast<unsigned long long>(row + first)) & 15u;
    const int start = first + min(last - first, static_cast<int>(((16u - misaligned) & 15u) >> 2));
    const int body = start + ((last - start) & ~3);
    Sum2 acc;
    if (lane < start - first) add_product(acc, __ldg(row + first + lane), __ldg(B + first + lane));
#pragma unroll 4
    for (int n = start + 4 * lane; n < body; n += PASS) {
        const float4 b = make_float4(__ldg(B + n), __ldg(B + n + 1), __ldg(B + n + 2), __ldg(B + n + 3));
        dot4(ldg4(row + n), b, acc);
    }
    if (lane < last - body) add_product(acc, __ldg(row + body + lane), __ldg(B + body + lane));
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
    Sum2 acc[ROWS];
    const bool aligned = N % 4 == 0 && ((reinterpret_cast<unsigned long long>(A) | reinterpret_cast<unsigned long long>(B)) & 15u) == 0;
    if (aligned) {
        shared_b(row, B, first, last, lane, acc);
    } else {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) acc[r] = own_b(row[r], B, first, last, lane);
    }
    // The lanes' pairs in a butterfly (partners compute the same bits), then one float a row.
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2)
            add_sum(acc[r], {__shfl_xor_sync(0xffffffffu, acc[r].s, offset), __shfl_xor_sync(0xffffffffu, acc[r].c, offset)});
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < ROWS; ++r) sums[warp * ROWS + r] = __fadd_rn(acc[r].s, acc[r].c);
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
