// float4: the 2D-tiled kernel with 16-byte memory operations.
//
// Same ownership as step 1.6 (an 8×4 micro-tile per thread), but every global
// load, every shared store of the staged tiles, every B read from shared
// memory and every C store moves a float4: a quarter of the instructions for
// the same bytes, and full 128-bit transactions. A float4 of A (or B) is
// either wholly inside the matrix or wholly outside only when N%4 == 0 and
// K%4 == 0, and the pointers are 16-byte aligned: the host checks that and
// uses step 1.6 otherwise.
//
// Tile sizes are macros so the same idea is measured three ways:
// BM=BN=64 with BK=32 (the default), BK=16, and BM=BN=128 (512 threads).
#include "common.cuh"

#ifndef BM
#define BM 64
#endif
#ifndef BN
#define BN BM
#endif
#ifndef BK
#define BK 32
#endif
#define TM 8
#define TN 4
#define THREADS ((BM / TM) * (BN / TN))
// Occupancy knobs, set per variant by the registry and measured with
// scripts/tune.py. Fully unrolled, ptxas fuses four reduction steps of A reads
// into LDS.128s holding 32 A values (about 110 registers at 128 threads: 4
// blocks per SM). MIN_BLOCKS makes ptxas fit more blocks; UNROLL_K < BK keeps
// it from fusing, at the price of more shared-memory loads.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef UNROLL_K
#define UNROLL_K BK
#endif
// EXACT_TILES=1: the host guarantees M % BM, N % BK and K % BN are 0, so no
// load or store needs a bounds check (fewer instructions and registers).
#ifndef EXACT_TILES
#define EXACT_TILES 0
#endif

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) float4_tiled(GEMM_ARGS) {
    __shared__ __align__(16) float As[BM][BK];
    __shared__ __align__(16) float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;
    float acc[TM][TN] = {};
    float ra[TM];

    for (int n0 = 0; n0 < N; n0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK / 4; e += THREADS) {
            const int r = e / (BK / 4), c = (e % (BK / 4)) * 4;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (EXACT_TILES || (row0 + r < M && n0 + c < N))
                v = *reinterpret_cast<const float4*>(&A[(row0 + r) * N + n0 + c]);
            *reinterpret_cast<float4*>(&As[r][c]) = v;
        }
#pragma unroll
        for (int e = tid; e < BK * BN / 4; e += THREADS) {
            const int r = e / (BN / 4), c = (e % (BN / 4)) * 4;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (EXACT_TILES || (n0 + r < N && col0 + c < K))
                v = *reinterpret_cast<const float4*>(&B[(n0 + r) * K + col0 + c]);
            *reinterpret_cast<float4*>(&Bs[r][c]) = v;
        }
        __syncthreads();
#pragma unroll UNROLL_K
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[trow + i][k];
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][tcol]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                acc[i][0] = fmaf(ra[i], b.x, acc[i][0]);
                acc[i][1] = fmaf(ra[i], b.y, acc[i][1]);
                acc[i][2] = fmaf(ra[i], b.z, acc[i][2]);
                acc[i][3] = fmaf(ra[i], b.w, acc[i][3]);
            }
        }
        __syncthreads();
    }
    const int col = col0 + tcol;
    if (!EXACT_TILES && col >= K) return;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow + i;
        if (EXACT_TILES || row < M)
            *reinterpret_cast<float4*>(&C[row * K + col]) =
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
