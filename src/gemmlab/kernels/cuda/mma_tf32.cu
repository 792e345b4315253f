// mma.sync TF32: the tensor cores the Ampere way, one warp-wide m16n8k8 at a time,
// fed by a multi-stage cp.async pipeline.
//
// A 256-thread block (8 warps, 2 down × 4 across) owns a 128×128 tile of C;
// each warp a 64×32 sub-tile = 4 × 4 fragments of 16×8, 64 FP32 accumulators
// per thread. Per reduction step of 32, tiles of A (128×32) and B (32×128)
// are copied global → shared by cp.async, STAGES − 1 steps ahead of the one
// being multiplied. Fragments are read from shared memory one float at a time,
// rounded to TF32 on the way into registers (`cvt.rna`), and multiplied with
// `mma.sync.m16n8k8` (FP32 accumulate).
//
// Padding makes every fragment read conflict-free: an A fragment read touches
// 8 rows × 4 columns, rows 36 floats apart (4g + q hits 32 banks); a B fragment
// read 4 rows × 8 columns, rows 136 floats apart (8q + g hits 32 banks).
#include "common.cuh"

#ifndef STAGES
#define STAGES 3
#endif
#ifndef VEC
#define VEC 4  // 4: 16-byte copies (N % 4 == 0, K % 4 == 0, aligned); 1: 4-byte copies, any shape
#endif
#define BM 128
#define BN 128
#define BK 32
#define THREADS 256
#define LDA (BK + 4)
#define LDB (BN + 8)
#define A_STAGE (BM * LDA)
#define B_STAGE (BK * LDB)

// Copy reduction step t of A and B into one stage, zero-filling outside the matrices.
__device__ __forceinline__ void load_step(const float* A, const float* B, float* As, float* Bs,
                                          int M, int N, int K, int row0, int col0, int t, int tid) {
    const int n0 = t * BK;
#if VEC == 4
#pragma unroll
    for (int i = 0; i < BM * BK / 4 / THREADS; ++i) {
        const int e = tid + i * THREADS, r = e / (BK / 4), c = (e % (BK / 4)) * 4;
        const bool in = row0 + r < M && n0 + c < N;
        cp_async16(&As[r * LDA + c], in ? &A[(size_t)(row0 + r) * N + n0 + c] : A, in);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / THREADS; ++i) {
        const int e = tid + i * THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;
        const bool in = n0 + r < N && col0 + c < K;
        cp_async16(&Bs[r * LDB + c], in ? &B[(size_t)(n0 + r) * K + col0 + c] : B, in);
    }
#else
#pragma unroll 4
    for (int i = 0; i < BM * BK / THREADS; ++i) {
        const int e = tid + i * THREADS, r = e / BK, c = e % BK;
        const bool in = row0 + r < M && n0 + c < N;
        cp_async4(&As[r * LDA + c], in ? &A[(size_t)(row0 + r) * N + n0 + c] : A, in);
    }
#pragma unroll 4
    for (int i = 0; i < BK * BN / THREADS; ++i) {
        const int e = tid + i * THREADS, r = e / BN, c = e % BN;
        const bool in = n0 + r < N && col0 + c < K;
        cp_async4(&Bs[r * LDB + c], in ? &B[(size_t)(n0 + r) * K + col0 + c] : B, in);
    }
#endif
}

__device__ __forceinline__ void mma_16x8x8(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(THREADS, 2) mma_tf32(GEMM_ARGS) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;
    float* Bs = smem + STAGES * A_STAGE;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, q = lane & 3;  // the fragment coordinates of this lane
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wm = (warp >> 2) * 64, wn = (warp & 3) * 32;
    const int steps = (N + BK - 1) / BK;

    float acc[4][4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < steps) load_step(A, B, As + s * A_STAGE, Bs + s * B_STAGE, M, N, K, row0, col0, s, tid);
        cp_async_commit();
    }
    for (int t = 0; t < steps; ++t) {
        cp_async_wait<STAGES - 2>();  // step t has landed (for this thread's copies) ...
        __syncthreads();              // ... and for everyone's; stage (t-1) % STAGES is free again
        const int next = t + STAGES - 1;
        if (next < steps)
            load_step(A, B, As + (next % STAGES) * A_STAGE, Bs + (next % STAGES) * B_STAGE, M, N, K,
                      row0, col0, next, tid);
        cp_async_commit();  // an empty group keeps the count of groups in step with t
        const float* a = As + (t % STAGES) * A_STAGE;
        const float* b = Bs + (t % STAGES) * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned af[4][4], bf[4][2];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const float* p = a + (wm + i * 16 + g) * LDA + kk + q;
                af[i][0] = tf32_bits(p[0]);
                af[i][1] = tf32_bits(p[8 * LDA]);
                af[i][2] = tf32_bits(p[4]);
                af[i][3] = tf32_bits(p[8 * LDA + 4]);
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float* p = b + (kk + q) * LDB + wn + j * 8 + g;
                bf[j][0] = tf32_bits(p[0]);
                bf[j][1] = tf32_bits(p[4 * LDB]);
            }
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) mma_16x8x8(acc[i][j], af[i], bf[j]);
        }
    }
    cp_async_wait<0>();

    // Accumulator element e of fragment (i, j): row g (+8 for e >= 2), column 2q (+1 for odd e).
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wm + i * 16 + g + 8 * h, c = col0 + wn + j * 8 + 2 * q;
                if (r >= M) continue;
                float* dst = &C[(size_t)r * K + c];
#if VEC == 4
                if (c < K) *reinterpret_cast<float2*>(dst) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
#else
                if (c < K) dst[0] = acc[i][j][2 * h];
                if (c + 1 < K) dst[1] = acc[i][j][2 * h + 1];
#endif
            }
}
