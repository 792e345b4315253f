// Mid-size work over long reductions: 8×8 outputs per thread, A read along the reduction, no
// pre-pass, split-K in a tree, and each step's products summed apart before they join the rest.
//
// `small` (small.cu) gives a thread 4×4 outputs: per reduction index one 16-byte load of B and
// four 4-byte loads of A feed 16 FMAs, so shared memory, not the FMA pipe, sets its pace once
// the work outgrows latency. bigtile's 8×16 outputs a thread read Aᵀ, which a pre-pass makes (a
// second launch, and A's bytes read and written once more): at a few hundred million FMAs that
// costs about as much as the product. This kernel keeps small's pipeline (A and B read where they
// lie, cp.async into a ring of STAGES shared stages, split-K over grid z meeting in splitk.cuh's
// tree) and gives each thread 8×8 outputs, reading A as it lies in shared memory (As[m][k]) 16
// bytes at a time *along the reduction*: one load brings four reduction indices of one row. Per
// four indices a thread loads 8 float4 of A and 8 of B for 256 FMAs, one 16-byte load per 16
// FMAs where small has one load per 3.2.
//
// Who owns what: thread (ty, tx) = (tid / (BN/8), tid % (BN/8)) holds rows ty + i·(BM/8) (i < 8)
// and columns 4·tx + j and BN/2 + 4·tx + j (j < 4) of its block's BM×BN tile. Rows a row apart,
// not eight, so that the lanes of a quarter warp reading A's rows hit different banks (rows are
// BK + 4 floats long); columns in two halves, so that a quarter warp's B loads are one 128-byte
// line.
//
// Strict FP32. PSUM 0: every product an FMA into the running sum. PSUM 1: each reduction step's
// BK products are summed apart (the first rounded by itself, an FMUL, the others FMAs), then
// added to the running sum: N/BK adds of step sums in place of N adds of single products, closer
// to the exact product over a long reduction. It costs one add per output a step (1/BK of the
// FMAs) and 64 registers.
//
// VEC 4: 16-byte copies (the host's precondition: N % 4 == 0, K % 4 == 0, A and B 16-byte
// aligned); VEC 1: 4-byte copies, any shape and alignment. C is stored 16 bytes at a time where
// its rows allow it.
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
#ifndef PSUM
#define PSUM 1
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#ifndef FAN
#define FAN 4  // the split-K tree's fan-in: a slot is 64 floats a thread, so fewer slots a level than small's 8
#endif
#define TM 8
#define TN 8
#define THREADS ((BM / TM) * (BN / TN))
#define ROW_STEP (BM / TM)  // between a thread's rows
// Rows of both tiles padded by 4 floats (16-byte copies and loads stay aligned): adjacent rows of
// A then start 4 banks apart, so a quarter warp's loads of eight rows are one wavefront.
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
static_assert(BK % 4 == 0 && BK % VEC == 0 && BN % 8 == 0 && BM % TM == 0, "whole float4 loads along k and n");
static_assert(STAGES >= 2, "STAGES ≥ 2");

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

__device__ __forceinline__ float lane_of(const float4& v, int q) {
    return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
}

// One stage's BK reduction indices into sum[]: A's rows four indices a load, B's row of each index
// in two 16-byte halves. FIRST: the stage's first product is rounded by itself (PSUM's fresh sum).
template <bool FIRST>
__device__ __forceinline__ void step_products(float (&sum)[TM * TN], const float* as, const float* bs) {
#pragma unroll
    for (int kk = 0; kk < BK; kk += 4) {
        float4 a[TM];
#pragma unroll
        for (int i = 0; i < TM; ++i) a[i] = *reinterpret_cast<const float4*>(&as[i * ROW_STEP * LDA + kk]);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const float4 b0 = *reinterpret_cast<const float4*>(&bs[(kk + q) * LDB]);
            const float4 b1 = *reinterpret_cast<const float4*>(&bs[(kk + q) * LDB + BN / 2]);
            const float bv[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const float av = lane_of(a[i], q);
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    if (FIRST && kk == 0 && q == 0) sum[i * TN + j] = __fmul_rn(av, bv[j]);
                    else sum[i * TN + j] = fmaf(av, bv[j], sum[i * TN + j]);
                }
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    mid(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ __align__(16) float As[STAGES][A_STAGE];  // As[s][m * LDA + k]
    __shared__ __align__(16) float Bs[STAGES][B_STAGE];  // Bs[s][k * LDB + n]
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ty = tid / (BN / TN), tx = tid % (BN / TN);
    // This part's steps of BK: [first, last) of ceil(N / BK).
    const int all = (N + BK - 1) / BK;
    const int first = all * blockIdx.z / gridDim.z, last = all * (blockIdx.z + 1) / gridDim.z;

    float acc[TM * TN];
#pragma unroll
    for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (first + s < last) copy_step(As[s], Bs[s], A, B, M, N, K, row0, col0, first + s);
        cp_async_commit();
    }
    for (int t = first; t < last; ++t) {
        cp_async_wait<STAGES - 2>();  // step t's group has landed (for this thread) ...
        __syncthreads();              // ... and for every thread; step t − 1's stage is free
        const int read = (t - first) % STAGES;
        if (t + STAGES - 1 < last)
            copy_step(As[(t - first + STAGES - 1) % STAGES], Bs[(t - first + STAGES - 1) % STAGES], A, B, M, N, K,
                      row0, col0, t + STAGES - 1);
        cp_async_commit();  // an empty group near the end keeps the wait count right
        const float* as = &As[read][ty * LDA];
        const float* bs = &Bs[read][tx * 4];
#if PSUM
        float part[TM * TN];
        step_products<true>(part, as, bs);
#pragma unroll
        for (int i = 0; i < TM * TN; ++i) acc[i] += part[i];
#else
        step_products<false>(acc, as, bs);
#endif
    }
    cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits

    if (gridDim.z > 1 &&
        !splitk::combine<TM * TN, THREADS, FAN>(acc, work, counters, blockIdx.y * gridDim.x + blockIdx.x,
                                                blockIdx.z, gridDim.z))
        return;  // another part of this tile goes on with its sum

    const bool vec_c = K % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + ty + i * ROW_STEP;
        if (row >= M) continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // the two halves of the thread's columns
            const int col = col0 + h * (BN / 2) + tx * 4;
            const float* v = &acc[i * TN + h * 4];
            float* out = &C[(size_t)row * K + col];
            if (vec_c && col < K) {  // K % 4 == 0: all four columns are in
                *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < K) out[j] = v[j];
            }
        }
    }
}
