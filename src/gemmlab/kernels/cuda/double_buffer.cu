// double buffering with a register prefetch.
//
// The float4 kernel (BK=16, 8×4 per thread) with two shared buffers. While the
// block computes on tile i from one buffer, each thread already holds tile
// i+1 in registers (its global loads were issued before the FMAs, so their
// latency hides behind them); after the FMAs it writes them to the other
// buffer. One barrier per step is enough: it orders both "tile i+1 is
// written" and "everyone is done reading the buffer the next write reuses".
//
// BM=BN=64 (128 threads) or BM=BN=128 (512 threads). Every load and store is
// bounds-checked per float4, so the host needs rows of whole float4s (N % 4,
// K % 4) and 16-byte aligned pointers.
#include "common.cuh"

#ifndef BM
#define BM 128
#endif
#define BN BM
#define BK 16
#define TM 8
#define TN 4
#define THREADS ((BM / TM) * (BN / TN))
#define LOADS_A (BM * BK / 4 / THREADS)
#define LOADS_B (BK * BN / 4 / THREADS)

extern "C" __global__ void __launch_bounds__(THREADS) double_buffer(GEMM_ARGS) {
    __shared__ __align__(16) float As[2][BM][BK];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;
    float acc[TM][TN] = {};
    float ra[TM];
    float4 pa[LOADS_A], pb[LOADS_B];

#define PREFETCH(n0)                                                              \
    _Pragma("unroll") for (int l = 0; l < LOADS_A; ++l) {                         \
        const int e = tid + l * THREADS, r = e / (BK / 4), c = (e % (BK / 4)) * 4; \
        pa[l] = (row0 + r < M && (n0) + c < N)                                    \
                    ? *reinterpret_cast<const float4*>(&A[(row0 + r) * N + (n0) + c]) \
                    : make_float4(0.f, 0.f, 0.f, 0.f);                            \
    }                                                                             \
    _Pragma("unroll") for (int l = 0; l < LOADS_B; ++l) {                         \
        const int e = tid + l * THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4; \
        pb[l] = ((n0) + r < N && col0 + c < K)                                    \
                    ? *reinterpret_cast<const float4*>(&B[((n0) + r) * K + col0 + c]) \
                    : make_float4(0.f, 0.f, 0.f, 0.f);                            \
    }

#define STAGE(buf)                                                                \
    _Pragma("unroll") for (int l = 0; l < LOADS_A; ++l) {                         \
        const int e = tid + l * THREADS;                                          \
        *reinterpret_cast<float4*>(&As[buf][e / (BK / 4)][(e % (BK / 4)) * 4]) = pa[l]; \
    }                                                                             \
    _Pragma("unroll") for (int l = 0; l < LOADS_B; ++l) {                         \
        const int e = tid + l * THREADS;                                          \
        *reinterpret_cast<float4*>(&Bs[buf][e / (BN / 4)][(e % (BN / 4)) * 4]) = pb[l]; \
    }

    PREFETCH(0)
    STAGE(0)
    __syncthreads();
    int buf = 0;
    for (int n0 = 0; n0 < N; n0 += BK) {
        const bool more = n0 + BK < N;
        if (more) { PREFETCH(n0 + BK) }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[buf][trow + i][k];
            const float4 b = *reinterpret_cast<const float4*>(&Bs[buf][k][tcol]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                acc[i][0] = fmaf(ra[i], b.x, acc[i][0]);
                acc[i][1] = fmaf(ra[i], b.y, acc[i][1]);
                acc[i][2] = fmaf(ra[i], b.z, acc[i][2]);
                acc[i][3] = fmaf(ra[i], b.w, acc[i][3]);
            }
        }
        if (more) { STAGE(buf ^ 1) }
        __syncthreads();
        buf ^= 1;
    }
    const int col = col0 + tcol;
    if (col >= K) return;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow + i;
        if (row < M)
            *reinterpret_cast<float4*>(&C[row * K + col]) =
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
