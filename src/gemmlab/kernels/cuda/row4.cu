// row-4: four outputs per thread along a row of C.
//
// 16×16 threads cover a 16×64 tile of C: thread (ty, tx) owns the columns
// tx, tx+16, tx+32, tx+48 of row ty. Per step of 16 along the reduction the
// block stages A[16×16] and B[16×64] in shared memory; each A value read from
// shared memory then feeds four FMAs instead of one.
//
// The B tile has four 16-column sub-tiles and each must be loaded from its own
// columns (the `+ 16 * j` below). The study note this rung comes from loaded
// the same B columns into all four sub-tiles; tests/fixtures keeps that
// mistake so the judge can show it is caught.
#include "common.cuh"

#define TM 16
#define TN 64
#define BK 16

extern "C" __global__ void __launch_bounds__(256) row4(GEMM_ARGS) {
    __shared__ float As[TM][BK];
    __shared__ float Bs[BK][TN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TM + ty;
    const int col0 = blockIdx.x * TN + tx;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int n0 = 0; n0 < N; n0 += BK) {
        As[ty][tx] = (row < M && n0 + tx < N) ? A[row * N + n0 + tx] : 0.0f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int col = col0 + 16 * j;
            Bs[ty][tx + 16 * j] = (n0 + ty < N && col < K) ? B[(n0 + ty) * K + col] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < BK; ++i) {
            const float a = As[ty][i];
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[j] = fmaf(a, Bs[i][tx + 16 * j], acc[j]);
        }
        __syncthreads();
    }
    if (row < M) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (col0 + 16 * j < K) C[row * K + col0 + 16 * j] = acc[j];
    }
}
