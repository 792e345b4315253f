// Tensor cores where the work is small or the output tiles few: mma.sync on 64×64 tiles, A and
// B read where they lie, each tile's reduction split across blocks.
//
// The Hopper rungs (wgmma-swap, wgmma-3xtf32) win where the output fills the GPU with their
// 256×128 or 128×128 tiles. Below that their fixed costs dominate: a persistent grid of 128 or
// 256 rows per tile leaves most SMs idle at 550×3002×118, a padded copy of an odd-shaped
// operand is its own pass, and each tile walks the whole reduction alone. So this kernel is
// `small`'s shape of work (small.cu) with `mma-tf32`'s arithmetic (mma_tf32.cu): 64×64
// tiles for many blocks, no pre-pass, STAGES − 1 cp.async steps in flight, and the reduction
// split into gridDim.z parts that meet in splitk.cuh's tree.
//
// Four warps (2 down × 2 across), each a 32×32 sub-tile: 2 × 4 fragments of m16n8k8, 32 FP32
// accumulators per thread; each operand rounded to TF32 once (cvt.rna) on its way to registers.
//
// Fragment reads are conflict-free: an A fragment read touches 8 rows (g) × 4 columns (q), rows
// LDA = BK + 4 floats apart, so 20·g + q covers 32 banks at BK 16; a B read touches 4 rows (q)
// × 8 columns (g), rows LDB = 72 floats apart: 8·q + g. VEC 4: 16-byte copies (N % 4 == 0,
// K % 4 == 0, A and B aligned); VEC 1: 4-byte copies, any shape and alignment.
#include "common.cuh"

#ifndef BK
#define BK 16
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef VEC_A  // the floats a copy of A's tile moves (tile_copy.cuh): VEC unless set
#define VEC_A VEC
#endif
#ifndef VEC_B  // and of B's
#define VEC_B VEC
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 4
#endif
#ifndef FAN
#define FAN 8
#endif
#define BM 64
#define BN 64
#define THREADS 128
#define FRAGS_M 2  // 16-row fragments per warp, down
#define FRAGS_N 4  // 8-column fragments per warp, across
#define ACC (FRAGS_M * FRAGS_N * 4)
#define LDA (BK + 4)
#define LDB (BN + 8)
#define A_STAGE (BM * LDA)
#define B_STAGE (BK * LDB)
static_assert(BK % 8 == 0, "whole k-steps of 8");
static_assert(STAGES >= 2, "a pipeline of at least two stages");

#include "splitk.cuh"
#include "tile_copy.cuh"

__device__ __forceinline__ void mma8(float* d, const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    mma_split(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ __align__(16) float As[STAGES][A_STAGE];  // As[s][m * LDA + k]
    __shared__ __align__(16) float Bs[STAGES][B_STAGE];  // Bs[s][k * LDB + n]
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int g = lane >> 2, q = lane & 3;  // the fragment coordinates of this lane
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const int all = (N + BK - 1) / BK;
    const int first = all * blockIdx.z / gridDim.z, last = all * (blockIdx.z + 1) / gridDim.z;

    float acc[ACC];  // fragment (i, j), element e at [(i * FRAGS_N + j) * 4 + e]
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;

    const TileCopy<BM, BN, BK, VEC_A, VEC_B, THREADS, LDA, LDB> copy(A, B, M, N, K, row0, col0);
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (first + s < last) copy(As[s], Bs[s], first + s);
        cp_async_commit();
    }
    for (int t = first; t < last; ++t) {
        cp_async_wait<STAGES - 2>();  // step t has landed (for this thread) ...
        __syncthreads();              // ... and for every thread; step t − 1's stage is free
        const int read = (t - first) % STAGES;
        if (t + STAGES - 1 < last)
            copy(As[(t - first + STAGES - 1) % STAGES], Bs[(t - first + STAGES - 1) % STAGES], t + STAGES - 1);
        cp_async_commit();  // an empty group near the end keeps the wait count right
        const float* a = As[read];
        const float* b = Bs[read];
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned af[FRAGS_M][4], bf[FRAGS_N][2];
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i) {
                const float* p = a + (wm + i * 16 + g) * LDA + kk + q;
                af[i][0] = tf32_bits(p[0]);
                af[i][1] = tf32_bits(p[8 * LDA]);
                af[i][2] = tf32_bits(p[4]);
                af[i][3] = tf32_bits(p[8 * LDA + 4]);
            }
#pragma unroll
            for (int j = 0; j < FRAGS_N; ++j) {
                const float* p = b + (kk + q) * LDB + wn + j * 8 + g;
                bf[j][0] = tf32_bits(p[0]);
                bf[j][1] = tf32_bits(p[4 * LDB]);
            }
#pragma unroll
            for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
                for (int j = 0; j < FRAGS_N; ++j) mma8(&acc[(i * FRAGS_N + j) * 4], af[i], bf[j]);
        }
    }
    cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits

    if (gridDim.z > 1 &&
        !splitk::combine<ACC, THREADS, FAN>(acc, work, counters, blockIdx.y * gridDim.x + blockIdx.x, blockIdx.z,
                                            gridDim.z))
        return;  // another part of this tile goes on with its sum

    // Element e of fragment (i, j): row g (+8 for e ≥ 2), column 2q (+1 for odd e).
    const bool pairs = K % 2 == 0 && reinterpret_cast<size_t>(C) % 8 == 0;
#pragma unroll
    for (int i = 0; i < FRAGS_M; ++i)
#pragma unroll
        for (int j = 0; j < FRAGS_N; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wm + i * 16 + g + 8 * h, c = col0 + wn + j * 8 + 2 * q;
                if (r >= M || c >= K) continue;
                const float* v = &acc[(i * FRAGS_N + j) * 4 + 2 * h];
                float* dst = &C[(size_t)r * K + c];
                if (pairs) {  // K even: c + 1 < K as well
                    *reinterpret_cast<float2*>(dst) = make_float2(v[0], v[1]);
                } else {
                    dst[0] = v[0];
                    if (c + 1 < K) dst[1] = v[1];
                }
            }
}
