// 1D block tiling: each thread computes TM=16 outputs down a column.
//
// A block of 64×4 threads owns a 64×64 tile of C. Per reduction step of 16 it
// stages A[64×16] and B[16×64] (4 elements per thread each, indexed by the
// flattened thread id so every warp reads contiguous global memory). Thread t
// owns column t%64 and rows 16·(t/64) … +15: per step it reads one B value
// into a register and reuses it for 16 FMAs, with A values that are the same
// for the whole warp (a shared-memory broadcast).
#include "common.cuh"

#define BM 64
#define BN 64
#define BK 16
#define TM 16
#define THREADS (BM * BN / TM)

extern "C" __global__ void __launch_bounds__(THREADS) tiling1d(GEMM_ARGS) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.y * blockDim.x + threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int tcol = tid % BN, trow = (tid / BN) * TM;
    float acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = 0.0f;

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
            const float b = Bs[k][tcol];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] = fmaf(As[trow + i][k], b, acc[i]);
        }
        __syncthreads();
    }
    const int col = col0 + tcol;
    if (col < K) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
            if (row0 + trow + i < M) C[(row0 + trow + i) * K + col] = acc[i];
    }
}
