// naive-fma: the naive kernel, accumulating with an explicit fmaf.
//
// fmaf(a, b, acc) rounds once instead of twice. NVRTC already contracts the
// naive kernel's `acc += a*b` into the same FFMA (fmad is on by default), so
// the two rungs compile to the same inner loop: the lesson is that the
// compiler did it for you, and that `-fmad=false` would not.
#include "common.cuh"

extern "C" __global__ void naive_fma(GEMM_ARGS) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;
    float acc = 0.0f;
    for (int n = 0; n < N; ++n)
        acc = fmaf(A[row * N + n], B[n * K + col], acc);
    C[row * K + col] = acc;
}
