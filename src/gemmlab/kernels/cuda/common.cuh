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

// cp.async (sm_80+): copy 16 bytes global → shared without passing through
// registers; with inside == false nothing is read and the 16 bytes are zeroed.
__device__ __forceinline__ void cp_async16(void* dst, const float* src, bool inside) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(inside ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Wait until at most PENDING committed groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// 4-byte cp.async (sm_80+): any alignment of a float; size 0 zero-fills.
__device__ __forceinline__ void cp_async4(void* dst, const float* src, bool inside) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(dst)),
                 "l"(src), "r"(inside ? 4 : 0)
                 : "memory");
}

// Round an FP32 value to TF32 (10 mantissa bits), to nearest with ties away from
// zero, as cuBLAS does; the low 13 bits of the result are zero.
__device__ __forceinline__ unsigned tf32_bits(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

// 3xTF32 splits x into hi = tf32(x) and lo = tf32(x - hi): hi·hi + hi·lo + lo·hi
// recovers an FP32-accurate product on TF32 tensor cores. The split is done on
// the bits: where rounding hi up would overflow a finite x to ±Inf, hi is
// truncated instead; where x is ±Inf or NaN, lo is 0, so that only hi carries it.
__device__ __forceinline__ bool finite_bits(float x) {
    return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u;
}
__device__ __forceinline__ float tf32_hi(float x) {
    unsigned h = tf32_bits(x);
    if (!finite_bits(__uint_as_float(h)) && finite_bits(x)) h = __float_as_uint(x) & 0xffffe000u;
    return __uint_as_float(h);
}
__device__ __forceinline__ float tf32_lo(float x, float hi) {
    return finite_bits(x) ? __uint_as_float(tf32_bits(x - hi)) : 0.0f;
}
