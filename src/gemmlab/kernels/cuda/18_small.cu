// Small outputs and little work: one launch, no pre-pass, the reduction split across blocks,
// and within a thread across several accumulator chains.
//
// Where a call's work is small, its time is latency: the launch, the loads of each reduction
// step waiting on the one before, a pre-pass's own launch (bigtile's Aᵀ), and, where N is long,
// the one chain of steps each tile walks alone while most SMs idle. So this kernel reads A and
// B where they lie (no pre-pass), covers C in BM×BN tiles small enough to give many blocks (TM×TN
// outputs per thread, 4×4 as the rung ships), keeps STAGES − 1 steps of loads in flight
// (cp.async into a ring of shared stages, as bigtile does), and splits each tile's reduction into gridDim.z parts that meet in
// splitk.cuh's tree (no block waits on another; a fixed order of adds).
//
// Strict FP32: every product is an FMA. A thread holds CHAINS sets of 16 accumulators. With two
// or more, the sum is blocked: each step's BK FMAs are summed from zero in set 0, and that step
// sum is added to a running sum, set 1 + (t % (CHAINS − 1)); the running sums are added in pairs
// at the end. The rounding errors of a sum of n terms grow with the partial sums they are made
// on: blocked, the long chain adds n / BK step sums, not n products, and each step sum is short,
// which leaves about a third of the elements outside LeetGPU's tolerance against the float64
// product that CHAINS interleaved chains did (experiments/accuracy/tile_orders.py, emulated; cuBLAS
// FP32 lies between the two). It costs one FADD per BK FMAs and no register. One set: one chain.
//
// VEC 4: 16-byte copies (the host's precondition: N % 4 == 0, K % 4 == 0, A and B 16-byte
// aligned); VEC 1: 4-byte copies, any shape and alignment. A's tile lies as A does (As[m][k]):
// a warp reads two of its rows at a time, broadcast; B's (Bs[k][n]) is read 16 bytes a thread.
// C is stored 16 bytes at a time where its rows allow it.
#include "common.cuh"

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN 64
#endif
#ifndef BK
#define BK 16
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef CHAINS
#define CHAINS 2
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#ifndef HOIST
#define HOIST 0
#endif
#ifndef FAN
#define FAN 8  // the split-K tree's fan-in: a slot is 16 floats a thread, cheap to read 8 of
#endif
// Outputs a thread holds: TM rows by TN columns. TN 8 is two groups of 4 columns, half a tile
// apart, so that a quarter warp's 16-byte reads of B's row stay 16 bytes apart (no bank conflict).
#ifndef TM
#define TM 4
#endif
#ifndef TN
#define TN 4
#endif
#define GROUPS (TN / 4)                // groups of 4 columns a thread holds
#define GROUP_STRIDE (BN / GROUPS)     // columns from one group to the next
#define THREADS ((BM / TM) * (BN / TN))
static_assert(TN % 4 == 0 && BN % TN == 0 && BM % TM == 0, "whole groups of 4 columns, whole thread tiles");
// Rows of both tiles padded by 4 floats (16-byte copies stay aligned): a warp's two rows of A
// (4 apart) then fall in different banks, not 64 floats apart in the same one.
#define PAD 4
#define LDA (BK + PAD)
#define LDB (BN + PAD)
#define A_STAGE (BM * LDA)
#define B_STAGE (BK * LDB)
// Copies of VEC floats each thread issues per step, for A's tile and for B's.
#define A_COPIES (BM * BK / VEC / THREADS)
#define B_COPIES (BK * BN / VEC / THREADS)
static_assert((BM * BK) % (VEC * THREADS) == 0 && (BK * BN) % (VEC * THREADS) == 0 && A_COPIES >= 1 &&
                  B_COPIES >= 1, "each thread must copy whole VEC-wide pieces of both tiles");
static_assert(BK % VEC == 0 && BN % VEC == 0, "a piece lies within one row of its tile");
static_assert(STAGES >= 2 && CHAINS >= 1 && (CHAINS & (CHAINS - 1)) == 0, "STAGES ≥ 2, CHAINS a power of 2");
// The running sums: every set but the step sum's, or the one chain.
#define RUNS (CHAINS > 1 ? CHAINS - 1 : 1)

#include "splitk.cuh"

// Step t's tiles into one stage: zeros outside A and B (the copy's source size 0).
__device__ __forceinline__ void copy_step(float* As, float* Bs, const float* A, const float* B, int M, int N,
                                          int K, int row0, int col0, int t) {
    const int n0 = t * BK;
#pragma unroll
    for (int l = 0; l < A_COPIES; ++l) {
        const int e = (threadIdx.x + l * THREADS) * VEC, r = e / BK, c = e % BK;
        const bool in = row0 + r < M && n0 + c < N;  // VEC 4: N % 4 == 0, so the piece is all in or out
        const float* src = in ? &A[(size_t)(row0 + r) * N + n0 + c] : A;
        if (VEC == 4) cp_async16(&As[r * LDA + c], src, in); else cp_async4(&As[r * LDA + c], src, in);
    }
#pragma unroll
    for (int l = 0; l < B_COPIES; ++l) {
        const int e = (threadIdx.x + l * THREADS) * VEC, r = e / BN, c = e % BN;
        const bool in = n0 + r < N && col0 + c < K;
        const float* src = in ? &B[(size_t)(n0 + r) * K + col0 + c] : B;
        if (VEC == 4) cp_async16(&Bs[r * LDB + c], src, in); else cp_async4(&Bs[r * LDB + c], src, in);
    }
}

// HOIST 1: the same copies, their addresses worked out once. copy_step derives each piece's
// row, column, bounds and 64-bit address from scratch at every step, which with VEC 1 (twelve
// 4-byte copies a thread a step at 32×64 tiles) made the main loop 569 instructions for 256
// FFMAs, 391 with VEC 4 (sm_90a SASS, 2026-12-04): where the loop is bound by issue, that is
// the time. A thread's pieces of one tile share a column and lie a fixed number of rows apart
// (THREADS·VEC is a multiple of BK and of BN), so a block keeps, per tile, one offset, the rows
// left inside the matrix, and whether the column is inside; a step adds n0 (A) or n0·K (B) to
// the offset and compares once per piece. Offsets are 32-bit: M·N and N·K are below 2³¹.
// The same bytes land in the same places: the products are unchanged, bit for bit.
struct Pieces {
    int a_off, a_rows;  // A: (row0 + r)·N + c of piece 0 at step 0; rows left below M from it
    int a_col;          // A: the pieces' column within the step
    int b_off, b_rows;  // B: r·K + col0 + c of piece 0 at step 0; its row within the step
    bool b_in;          // B: the pieces' column is inside K
};
#define A_ROWS_APART (THREADS * VEC / BK)
#define B_ROWS_APART (THREADS * VEC / BN)
__device__ __forceinline__ Pieces pieces_of(int M, int N, int K, int row0, int col0) {
    const int ea = threadIdx.x * VEC, eb = threadIdx.x * VEC;
    Pieces p;
    p.a_col = ea % BK;
    p.a_off = (row0 + ea / BK) * N + p.a_col;
    p.a_rows = M - row0 - ea / BK;
    p.b_rows = eb / BN;
    p.b_off = p.b_rows * K + col0 + eb % BN;
    p.b_in = col0 + eb % BN < K;
    return p;
}
__device__ __forceinline__ void copy_step_hoisted(float* As, float* Bs, const float* A, const float* B,
                                                  int N, int K, const Pieces& p, int t) {
    static_assert((THREADS * VEC) % BK == 0 && (THREADS * VEC) % BN == 0,
                  "HOIST: a thread's pieces of a tile share one column");
    const int n0 = t * BK;
    const bool col_in = n0 + p.a_col < N;  // VEC 4: N % 4 == 0, so the piece is all in or out
    const int a0 = p.a_off + n0;
    const int dst_a = (threadIdx.x * VEC / BK) * LDA + p.a_col;
#pragma unroll
    for (int l = 0; l < A_COPIES; ++l) {
        const bool in = col_in && l * A_ROWS_APART < p.a_rows;
        const float* src = in ? A + a0 + l * A_ROWS_APART * N : A;
        if (VEC == 4) cp_async16(&As[dst_a + l * A_ROWS_APART * LDA], src, in);
        else cp_async4(&As[dst_a + l * A_ROWS_APART * LDA], src, in);
    }
    const int rows_left = N - n0 - p.b_rows;  // rows of this step's B tile from piece 0 down
    const int b0 = p.b_off + n0 * K;
    const int dst_b = p.b_rows * LDB + (threadIdx.x * VEC) % BN;
#pragma unroll
    for (int l = 0; l < B_COPIES; ++l) {
        const bool in = p.b_in && l * B_ROWS_APART < rows_left;
        const float* src = in ? B + b0 + l * B_ROWS_APART * K : B;
        if (VEC == 4) cp_async16(&Bs[dst_b + l * B_ROWS_APART * LDB], src, in);
        else cp_async4(&Bs[dst_b + l * B_ROWS_APART * LDB], src, in);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    small(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ __align__(16) float As[STAGES][A_STAGE];  // As[s][m * LDA + k]
    __shared__ __align__(16) float Bs[STAGES][B_STAGE];  // Bs[s][k * LDB + n]
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * 4;  // group g at tcol + g·GROUP_STRIDE
    // This part's steps of BK: [first, last) of ceil(N / BK).
    const int all = (N + BK - 1) / BK;
    const int first = all * blockIdx.z / gridDim.z, last = all * (blockIdx.z + 1) / gridDim.z;

    float acc[RUNS][TM * TN];
#pragma unroll
    for (int r = 0; r < RUNS; ++r)
#pragma unroll
        for (int i = 0; i < TM * TN; ++i) acc[r][i] = 0.0f;

#if HOIST
    const Pieces pieces = pieces_of(M, N, K, row0, col0);
#define COPY_STEP(as_, bs_, t_) copy_step_hoisted(as_, bs_, A, B, N, K, pieces, t_)
#else
#define COPY_STEP(as_, bs_, t_) copy_step(as_, bs_, A, B, M, N, K, row0, col0, t_)
#endif
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (first + s < last) COPY_STEP(As[s], Bs[s], first + s);
        cp_async_commit();
    }
    // Steps come RUNS at a time, so that step t's running sum (t − first) % RUNS is known when
    // compiling: an accumulator indexed at run time would live in local memory.
    for (int t0 = first; t0 < last; t0 += RUNS) {
#pragma unroll
        for (int r = 0; r < RUNS; ++r) {
            const int t = t0 + r;
            if (t >= last) break;
            cp_async_wait<STAGES - 2>();  // step t's group has landed (for this thread) ...
            __syncthreads();              // ... and for every thread; step t − 1's stage is free
            const int read = (t - first) % STAGES;
            if (t + STAGES - 1 < last) {
                const int write = (t - first + STAGES - 1) % STAGES;
                COPY_STEP(As[write], Bs[write], t + STAGES - 1);
            }
            cp_async_commit();  // an empty group near the end keeps the wait count right
            const float* as = &As[read][trow * LDA];
            const float* bs = &Bs[read][tcol];
#if CHAINS > 1
            float sum[TM * TN];  // this step's sum, from zero
#else
            float (&sum)[TM * TN] = acc[0];
#endif
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                float bv[TN];
#pragma unroll
                for (int g = 0; g < GROUPS; ++g) {
                    const float4 b = *reinterpret_cast<const float4*>(&bs[k * LDB + g * GROUP_STRIDE]);
                    bv[4 * g] = b.x, bv[4 * g + 1] = b.y, bv[4 * g + 2] = b.z, bv[4 * g + 3] = b.w;
                }
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const float a = as[i * LDA + k];
#pragma unroll
                    for (int j = 0; j < TN; ++j)
                        // The step's first product is rounded alone (__fmul_rn: never fused with
                        // anything), as an FMA onto zero would round it.
                        sum[i * TN + j] = CHAINS > 1 && k == 0 ? __fmul_rn(a, bv[j])
                                                               : fmaf(a, bv[j], sum[i * TN + j]);
                }
            }
#if CHAINS > 1
#pragma unroll
            for (int i = 0; i < TM * TN; ++i) acc[r][i] += sum[i];
#endif
        }
    }
#undef COPY_STEP
    cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits
    // The running sums added in pairs: (r0 + r1) + (r2 + r3) …, a fixed order.
#pragma unroll
    for (int w = 1; w < RUNS; w *= 2)
#pragma unroll
        for (int r = 0; r + w < RUNS; r += 2 * w)
#pragma unroll
            for (int i = 0; i < TM * TN; ++i) acc[r][i] += acc[r + w][i];

    if (gridDim.z > 1 &&
        !splitk::combine<TM * TN, THREADS, FAN>(acc[0], work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                                blockIdx.z, gridDim.z))
        return;  // another part of this tile goes on with its sum

    const bool vec_c = K % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow + i;
        if (row >= M) continue;
#if GROUPS == 1  // as the rung ships: the tune record's cubins
        float* out = &C[(size_t)row * K + col0 + tcol];
        if (vec_c && col0 + tcol < K) {  // K % 4 == 0: all four columns are in
            *reinterpret_cast<float4*>(out) =
                make_float4(acc[0][i * TN], acc[0][i * TN + 1], acc[0][i * TN + 2], acc[0][i * TN + 3]);
        } else {
#pragma unroll
            for (int j = 0; j < TN; ++j)
                if (col0 + tcol + j < K) out[j] = acc[0][i * TN + j];
        }
#else
#pragma unroll
        for (int g = 0; g < GROUPS; ++g) {
            const int col = col0 + tcol + g * GROUP_STRIDE;
            const float* v = &acc[0][i * TN + 4 * g];
            float* out = &C[(size_t)row * K + col];
            if (vec_c && col < K) {  // K % 4 == 0: all four columns are in
                *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < K) out[j] = v[j];
            }
        }
#endif
    }
}
