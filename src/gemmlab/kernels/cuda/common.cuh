// Shared by every rung: the one kernel signature and a few PTX helpers.
// Row-major float32: A is M×N, B is N×K, C is M×K; the reduction index is N.
#pragma once

#define GEMM_ARGS                                                          \
    const float* __restrict__ A, const float* __restrict__ B,              \
    float* __restrict__ C, int M, int N, int K

// The 32-bit shared-window address PTX's shared-memory instructions take.
__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
