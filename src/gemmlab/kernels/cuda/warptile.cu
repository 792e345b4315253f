// Warp tiling: the SIMT techniques past the notes, strict FP32.
//
// A 128×128 tile of C per block of 256 threads, 8×8 outputs per thread, as
// the float4 rung, but arranged so every shared-memory read is a 16-byte
// load that no two lanes of a warp fight over:
//
//  * A is stored transposed, As[k][m]. A thread's 8 values of A for step k
//    are then two float4 loads, as its 8 values of B are.
//  * The 8 warps split the tile 2 × 4, each warp owning a 64×32 block of C.
//    Inside it a lane owns a 2×2 grid of 4×4 sub-tiles, 32 rows and 16
//    columns apart. For one k the warp's lanes read 8 consecutive float4 of
//    As (128 bytes) and 4 of Bs (64 bytes), each a single conflict-free
//    shared-memory wavefront, shared by broadcast.
//  * Two shared buffers with a register prefetch (step 2.4): the global loads
//    for step i+1 are in flight while the FMAs of step i run, and one barrier
//    per step suffices.
//
// Per k each thread issues 4 LDS.128 for 64 FFMA, a ratio of 1:16.
//
// Knobs: BK (reduction step, 8 or 16), MIN_BLOCKS (blocks per SM ptxas must
// fit in registers), EXACT_TILES (the host guarantees whole tiles: no bounds
// checks). The host's preconditions: `gemmlab explain warptile`.
#include "common.cuh"

#define BM 128
#define BN 128
#ifndef BK
#define BK 16
#endif
#define THREADS 256
#define WARPS_N 4  // warps arranged 2 (rows) × 4 (columns)
#define WM 64      // rows of C per warp
#define WN 32      // columns of C per warp
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
#ifndef EXACT_TILES
#define EXACT_TILES 0
#endif
#define LOADS_A (BM * BK / 4 / THREADS)
#define LOADS_B (BK * BN / 4 / THREADS)

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) warptile(GEMM_ARGS) {
    __shared__ __align__(16) float As[2][BK][BM];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    // This thread's first row and column inside the block tile; the other
    // sub-tiles are at +32 rows and +16 columns.
    const int tm = (warp / WARPS_N) * WM + (lane / 4) * 4;
    const int tn = (warp % WARPS_N) * WN + (lane % 4) * 4;
    float acc[8][8] = {};
    float4 pa[LOADS_A], pb[LOADS_B];

    // The next step's tiles into registers: float4 loads, zero outside the matrix.
    // Four lanes read one row of A's 64 bytes.
#define PREFETCH(n0)                                                                  \
    _Pragma("unroll") for (int l = 0; l < LOADS_A; ++l) {                             \
        const int e = tid + l * THREADS, r = e / (BK / 4), c = (e % (BK / 4)) * 4;     \
        pa[l] = (EXACT_TILES || (row0 + r < M && (n0) + c < N))                       \
                    ? *reinterpret_cast<const float4*>(&A[(row0 + r) * N + (n0) + c]) \
                    : make_float4(0.f, 0.f, 0.f, 0.f);                                \
    }                                                                                 \
    _Pragma("unroll") for (int l = 0; l < LOADS_B; ++l) {                             \
        const int e = tid + l * THREADS, r = e / (BN / 4), c = (e % (BN / 4)) * 4;     \
        pb[l] = (EXACT_TILES || ((n0) + r < N && col0 + c < K))                       \
                    ? *reinterpret_cast<const float4*>(&B[((n0) + r) * K + col0 + c]) \
                    : make_float4(0.f, 0.f, 0.f, 0.f);                                \
    }

    // Into shared memory after the FMAs: A transposed, four scalar stores per float4; B as float4.
#define STAGE(buf)                                                                    \
    _Pragma("unroll") for (int l = 0; l < LOADS_A; ++l) {                             \
        const int e = tid + l * THREADS, r = e / (BK / 4), c = (e % (BK / 4)) * 4;     \
        As[buf][c + 0][r] = pa[l].x;                                                  \
        As[buf][c + 1][r] = pa[l].y;                                                  \
        As[buf][c + 2][r] = pa[l].z;                                                  \
        As[buf][c + 3][r] = pa[l].w;                                                  \
    }                                                                                 \
    _Pragma("unroll") for (int l = 0; l < LOADS_B; ++l) {                             \
        const int e = tid + l * THREADS;                                              \
        *reinterpret_cast<float4*>(&Bs[buf][e / (BN / 4)][(e % (BN / 4)) * 4]) = pb[l]; \
    }

    PREFETCH(0)
    STAGE(0)
    __syncthreads();
    int buf = 0;
    for (int n0 = 0; n0 < N; n0 += BK) {
        const bool more = n0 + BK < N;
        if (more) { PREFETCH(n0 + BK) }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][tm]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][tm + 32]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tn]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][tn + 16]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) { STAGE(buf ^ 1) }
        __syncthreads();
        buf ^= 1;
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + tm + (i / 4) * 32 + i % 4;
        if (!EXACT_TILES && row >= M) continue;
#pragma unroll
        for (int s = 0; s < 2; ++s) {
            const int col = col0 + tn + s * 16;
            if (EXACT_TILES || col < K)  // K % 4 == 0: col < K means all four are in
                *reinterpret_cast<float4*>(&C[row * K + col]) = make_float4(
                    acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]);
        }
    }
}
