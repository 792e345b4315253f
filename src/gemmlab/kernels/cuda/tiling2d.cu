// 2D block tiling: each thread computes an 8×4 micro-tile.
//
// 128 threads own a 64×64 tile of C; thread t owns rows 8·(t/16) … +7 and
// columns 4·(t%16) … +3. Per reduction element it loads 8 A and 4 B values
// from shared memory into registers and does their outer product: 32 FMAs for
// 12 shared loads (the 1D rung did 16 for 17). This kernel is bounds-checked
// everywhere, so later rungs use it as their fallback for any shape.
#include "common.cuh"

#define BM 64
#define BN 64
#define BK 16
#define TM 8
#define TN 4
#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS) tiling2d(GEMM_ARGS) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;
    float acc[TM][TN] = {};
    float ra[TM], rb[TN];

    for (int n0 = 0; n0 < N; n0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, c = e % BK;
            As[r][c] = (row0 + r < M && n0 + c < N) ? A[(row0 + r) * N + n0 + c] : 0.0f;
        }
#pragma unroll
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN, c = e % BN;
            Bs[r][c] = (n0 + r < N && col0 + c < K) ? B[(n0 + r) * K + col0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[trow + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) rb[j] = Bs[k][tcol + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow + i;
        if (row >= M) break;
#pragma unroll
        for (int j = 0; j < TN; ++j)
            if (col0 + tcol + j < K) C[row * K + col0 + tcol + j] = acc[i][j];
    }
}
