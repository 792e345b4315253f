// naive: one thread per output element, straight from global memory.
//
// Block 16×16; x walks the columns of C (so a warp reads consecutive B
// elements: coalesced), y walks the rows. Threads outside C return early.
#include "common.cuh"

extern "C" __global__ void naive(GEMM_ARGS) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;
    float acc = 0.0f;
    for (int n = 0; n < N; ++n)
        acc += A[row * N + n] * B[n * K + col];  // NVRTC contracts this to an FFMA by default
    C[row * K + col] = acc;
}
