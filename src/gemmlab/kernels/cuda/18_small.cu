// Small outputs: one launch, no pre-pass, the reduction split across blocks.
//
// Below about a quarter of a wave of 128×128 tiles, a call's time is latency: the launch, the
// first loads, a pre-pass's own launch, and for a long reduction the one chain of steps a tile
// walks alone. So this kernel reads A and B where they lie (no Aᵀ pass), covers C in BM×BN tiles
// small enough to give many blocks (64×64 by default, 4×4 outputs per thread), and splits each
// tile's reduction into gridDim.z parts that meet in splitk.cuh's pairwise tree (no block waits
// on another; a fixed order of adds). Strict FP32: every product is an FMA in reduction order
// within a part, and the parts are added in pairs.
//
// Per step each thread loads A and B values into registers for the next step while it runs this
// step's FMAs from shared memory (a register prefetch, two shared buffers, one barrier a step):
// A's tile transposed on the way (As[k][m]), so that a thread's 4 rows are one float4, as are its
// 4 columns of B. VEC 4: 16-byte loads (the host's precondition: N % 4 == 0, K % 4 == 0, A and B
// 16-byte aligned); VEC 1: 4-byte loads, any shape and alignment. C is stored 16 bytes at a
// time where its rows allow it.
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
#ifndef VEC
#define VEC 4
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#define TM 4
#define TN 4
// A's tile is stored transposed, As[k][m]: a thread's 4 rows are one float4. Its float4 chunks
// are XOR-swizzled by the row k's group of 4, so that a warp's transposing scalar stores (8 rows
// m × 4 groups of k) hit 32 banks, not 8; a thread's 4 rows stay one float4.
#define A_AT(k, m) (((((m) / 4) ^ (2 * (((k) / 4) % 4))) * 4) + (m) % 4)
#define THREADS ((BM / TM) * (BN / TN))
// Floats of A and of B each thread brings per step (in VEC-wide pieces).
#define A_PER_THREAD (BM * BK / THREADS)
#define B_PER_THREAD (BK * BN / THREADS)
static_assert(A_PER_THREAD % VEC == 0 && B_PER_THREAD % VEC == 0 && A_PER_THREAD >= VEC && B_PER_THREAD >= VEC,
              "each thread must bring whole VEC-wide pieces of both tiles");
static_assert(BK % VEC == 0 && BN % VEC == 0, "a piece lies within one row of its tile");
static_assert(BM >= 32, "the swizzle of A's chunks spans 8 of them");

#include "splitk.cuh"

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    small(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ __align__(16) float As[2][BK][BM];  // transposed and swizzled: As[k][A_AT(k, m)]
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;
    // This part's steps of BK: [first, last) of ceil(N / BK).
    const int all = (N + BK - 1) / BK;
    const int first = (int)((long long)all * blockIdx.z / gridDim.z);
    const int last = (int)((long long)all * (blockIdx.z + 1) / gridDim.z);

    float pa[A_PER_THREAD], pb[B_PER_THREAD];
    // Piece l of this thread: A's (row, column) within the tile, B's likewise.
    auto a_at = [&](int l, int& r, int& c) {
        const int e = (tid + l * THREADS) * VEC;
        r = e / BK, c = e % BK;
    };
    auto b_at = [&](int l, int& r, int& c) {
        const int e = (tid + l * THREADS) * VEC;
        r = e / BN, c = e % BN;
    };
    auto fetch = [&](int t) {  // step t's values, zeros outside the matrices
        const int n0 = t * BK;
#pragma unroll
        for (int l = 0; l < A_PER_THREAD / VEC; ++l) {
            int r, c;
            a_at(l, r, c);
            const int row = row0 + r, n = n0 + c;
            if (VEC == 4) {
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (row < M && n < N) v = *reinterpret_cast<const float4*>(&A[(size_t)row * N + n]);
                pa[4 * l] = v.x, pa[4 * l + 1] = v.y, pa[4 * l + 2] = v.z, pa[4 * l + 3] = v.w;
            } else {
                pa[l] = row < M && n < N ? A[(size_t)row * N + n] : 0.0f;
            }
        }
#pragma unroll
        for (int l = 0; l < B_PER_THREAD / VEC; ++l) {
            int r, c;
            b_at(l, r, c);
            const int n = n0 + r, col = col0 + c;
            if (VEC == 4) {
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                if (n < N && col < K) v = *reinterpret_cast<const float4*>(&B[(size_t)n * K + col]);
                pb[4 * l] = v.x, pb[4 * l + 1] = v.y, pb[4 * l + 2] = v.z, pb[4 * l + 3] = v.w;
            } else {
                pb[l] = n < N && col < K ? B[(size_t)n * K + col] : 0.0f;
            }
        }
    };
    auto stage = [&](int buf) {
#pragma unroll
        for (int l = 0; l < A_PER_THREAD / VEC; ++l) {
            int r, c;
            a_at(l, r, c);
#pragma unroll
            for (int j = 0; j < VEC; ++j) As[buf][c + j][A_AT(c + j, r)] = pa[VEC * l + j];
        }
#pragma unroll
        for (int l = 0; l < B_PER_THREAD / VEC; ++l) {
            int r, c;
            b_at(l, r, c);
#pragma unroll
            for (int j = 0; j < VEC; ++j) Bs[buf][r][c + j] = pb[VEC * l + j];
        }
    };

    float acc[TM * TN];
#pragma unroll
    for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0f;
    if (first < last) {
        fetch(first);
        stage(0);
    }
    __syncthreads();
    int buf = 0;
    for (int t = first; t < last; ++t) {
        const bool more = t + 1 < last;
        if (more) fetch(t + 1);  // in flight while this step's FMAs run
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a = *reinterpret_cast<const float4*>(&As[buf][k][A_AT(k, trow)]);
            const float4 b = *reinterpret_cast<const float4*>(&Bs[buf][k][tcol]);
            const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i * TN + j] = fmaf(av[i], bv[j], acc[i * TN + j]);
        }
        if (more) stage(buf ^ 1);
        __syncthreads();  // the next step's tile is written, and this one's is no longer read
        buf ^= 1;
    }

    if (gridDim.z > 1 &&
        !splitk::combine<TM * TN, THREADS>(acc, work, counters, blockIdx.y * gridDim.x + blockIdx.x, blockIdx.z,
                                           gridDim.z))
        return;  // another part of this tile goes on with its sum

    const bool vec_c = K % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow + i;
        if (row >= M) continue;
        float* out = &C[(size_t)row * K + col0 + tcol];
        if (vec_c && col0 + tcol < K) {  // K % 4 == 0: all four columns are in
            *reinterpret_cast<float4*>(out) =
                make_float4(acc[i * TN], acc[i * TN + 1], acc[i * TN + 2], acc[i * TN + 3]);
        } else {
#pragma unroll
            for (int j = 0; j < TN; ++j)
                if (col0 + tcol + j < K) out[j] = acc[i * TN + j];
        }
    }
}
