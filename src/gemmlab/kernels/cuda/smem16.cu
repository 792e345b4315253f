// smem-16: shared-memory tiling.
//
// A 16×16 block computes a 16×16 tile of C. Each step the block copies a
// 16×16 tile of A and of B into shared memory (zero outside the matrices, so
// edge tiles need no special case in the inner loop), waits, does 16 FMAs per
// thread from shared memory, and waits again before the tiles are replaced.
// Each global element is now read K/16 (or M/16) times instead of K (or M).
#include "common.cuh"

#define TILE 16
// EXACT_TILES=1: the host guarantees M, N and K are multiples of 16, so the
// loads and the store need no bounds checks.
#ifndef EXACT_TILES
#define EXACT_TILES 0
#endif

extern "C" __global__ void __launch_bounds__(TILE * TILE) smem16(GEMM_ARGS) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int n0 = 0; n0 < N; n0 += TILE) {
        As[ty][tx] = (EXACT_TILES || (row < M && n0 + tx < N)) ? A[row * N + n0 + tx] : 0.0f;
        Bs[ty][tx] = (EXACT_TILES || (n0 + ty < N && col < K)) ? B[(n0 + ty) * K + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int i = 0; i < TILE; ++i) acc = fmaf(As[ty][i], Bs[i][tx], acc);
        __syncthreads();
    }
    if (EXACT_TILES || (row < M && col < K)) C[row * K + col] = acc;
}
