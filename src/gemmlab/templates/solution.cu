// LeetGPU "Matrix Multiplication", CUDA format. A is M×N, B is N×K, C is M×K,
// row-major float32 device pointers. Judge it with: gemmlab judge THIS_FILE
#include <cuda_runtime.h>

__global__ void matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;
    // TODO: C[row * K + col] = sum over n of A[row * N + n] * B[n * K + col]
}

// A, B, C are device pointers.
extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    matmul_kernel<<<grid, block>>>(A, B, C, M, N, K);
    cudaDeviceSynchronize();
}
