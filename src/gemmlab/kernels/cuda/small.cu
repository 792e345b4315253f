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
#ifndef VEC_A  // the floats a copy of A's tile moves (tile_copy.cuh): VEC unless set
#define VEC_A VEC
#endif
#ifndef VEC_B  // and of B's
#define VEC_B VEC
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
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
static_assert(STAGES >= 2 && CHAINS >= 1 && (CHAINS & (CHAINS - 1)) == 0, "STAGES ≥ 2, CHAINS a power of 2");
// The running sums: every set but the step sum's, or the one chain.
#define RUNS (CHAINS > 1 ? CHAINS - 1 : 1)

#include "splitk.cuh"
#include "tile_copy.cuh"

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

    const TileCopy<BM, BN, BK, VEC_A, VEC_B, THREADS, LDA, LDB> copy(A, B, M, N, K, row0, col0);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (first + s < last) copy(As[s], Bs[s], first + s);
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
                copy(As[write], Bs[write], t + STAGES - 1);
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
