// WMMA TF32: the tensor cores, through warp-level matrix operations.
//
// A 512-thread block (16 warps) owns a 128×128 tile of C; warp w owns the
// 16×64 strip at rows 16·(w/2), columns 64·(w%2), as four 16×16 accumulator
// fragments in registers. Per reduction step of 32 the block stages A[128×32]
// and B[32×128] in shared memory, each value rounded to TF32 on the way
// (`cvt.rna.tf32.f32`: 10 mantissa bits, round to nearest); each warp then
// runs 4 × 4 `wmma.mma` m16n16k8 operations, accumulating in FP32.
//
// No bounds checks: the host uses this path only when M%128, N%32 and K%128
// are 0 and the pointers are 32-byte aligned, and step 2.1 or 1.6 otherwise.
// Written in inline PTX so that NVRTC needs no CUDA headers.
#include "common.cuh"

#define BM 128
#define BN 128
#define BK 32
#define PAD 4  // keeps every fragment 32-byte aligned and spreads the banks
#define LDA (BK + PAD)
#define LDB (BN + PAD)
#define THREADS 512

__device__ __forceinline__ float to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

__device__ __forceinline__ float4 to_tf32(float4 v) {
    return make_float4(to_tf32(v.x), to_tf32(v.y), to_tf32(v.z), to_tf32(v.w));
}

extern "C" __global__ void __launch_bounds__(THREADS) wmma_tf32(GEMM_ARGS) {
    __shared__ __align__(32) float As[BM * LDA];
    __shared__ __align__(32) float Bs[BK * LDB];
    const int tid = threadIdx.x, warp = tid / 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wr = (warp / 2) * 16, wc = (warp % 2) * 64;
    float d[4][8];
#pragma unroll
    for (int f = 0; f < 4; ++f)
#pragma unroll
        for (int e = 0; e < 8; ++e) d[f][e] = 0.0f;

    for (int n0 = 0; n0 < N; n0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK / 4; e += THREADS) {
            const int r = e / (BK / 4), c = (e % (BK / 4)) * 4;
            *reinterpret_cast<float4*>(&As[r * LDA + c]) =
                to_tf32(*reinterpret_cast<const float4*>(&A[(row0 + r) * N + n0 + c]));
        }
#pragma unroll
        for (int e = tid; e < BK * BN / 4; e += THREADS) {
            const int r = e / (BN / 4), c = (e % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[r * LDB + c]) =
                to_tf32(*reinterpret_cast<const float4*>(&B[(n0 + r) * K + col0 + c]));
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned a[4];
            asm volatile(
                "wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0,%1,%2,%3}, [%4], %5;\n"
                : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                : "r"(smem_u32(&As[wr * LDA + kk])), "r"(LDA));
#pragma unroll
            for (int f = 0; f < 4; ++f) {
                unsigned b[4];
                asm volatile(
                    "wmma.load.b.sync.aligned.row.m16n16k8.shared.tf32 {%0,%1,%2,%3}, [%4], %5;\n"
                    : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                    : "r"(smem_u32(&Bs[kk * LDB + wc + f * 16])), "r"(LDB));
                asm volatile(
                    "wmma.mma.sync.aligned.row.row.m16n16k8.f32.tf32.tf32.f32 "
                    "{%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, {%12,%13,%14,%15}, "
                    "{%0,%1,%2,%3,%4,%5,%6,%7};\n"
                    : "+f"(d[f][0]), "+f"(d[f][1]), "+f"(d[f][2]), "+f"(d[f][3]),
                      "+f"(d[f][4]), "+f"(d[f][5]), "+f"(d[f][6]), "+f"(d[f][7])
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),
                      "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]));
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int f = 0; f < 4; ++f) {
        float* dst = &C[(row0 + wr) * K + col0 + wc + f * 16];
        asm volatile(
            "wmma.store.d.sync.aligned.row.m16n16k8.global.f32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8}, %9;\n"
            ::"l"(dst), "f"(d[f][0]), "f"(d[f][1]), "f"(d[f][2]), "f"(d[f][3]),
              "f"(d[f][4]), "f"(d[f][5]), "f"(d[f][6]), "f"(d[f][7]), "r"(K)
            : "memory");
    }
}
