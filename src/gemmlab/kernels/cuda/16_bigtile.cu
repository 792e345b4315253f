// Big thread tiles: 128 accumulators per thread, a multi-stage cp.async
// pipeline, strict FP32 (IEEE FMA, each output accumulated in reduction order).
//
// Warptile (rung 14) gives each thread 8×8 outputs: per reduction index it
// issues 4 LDS.128 for 64 FFMA, and moves its A tile through registers. Here
// each thread owns 8×16 outputs, so per reduction index it issues 6 LDS.128
// for 128 FFMA, and both tiles go global → shared by cp.async, STAGES − 1
// steps ahead. The registry's launches run:
//
//  * A_T 1: A arrives as Aᵀ (N rows of pitch(M) floats), written by the host's
//    pre-pass (cuda/transposed.py), so a thread's 8 values of A for one
//    reduction index are two float4 of one row (rows 4r + {0..3, 32..35}),
//    and the next index's fragments are loaded while this one's FMAs run.
//  * B read as it lies (Bs[n][k]), or from the host's copy in rows of pitch(K)
//    floats (PAD_B) where K % 4 != 0: four float4 at columns 16 apart; the
//    four lanes of a row group read 64 contiguous bytes.
//  * One barrier per step: the stage refilled at step t was last read at t − 1.
//
// Measured and kept as knobs, not run by any launch (16_bigtile.md): A_T 0, A
// as it lies (As[m][n]) read as one float4 of 4 reduction indices per row, its
// 16-byte chunks XOR-swizzled by the row's place in its 128-byte line; VEC 1,
// 4-byte copies; UNROLL_K; J_OUTER 3.
//
// A warp owns a 64×64 block of C (lanes 8 down × 4 across); the block has
// WARPS_M × WARPS_N warps. Knobs: WARPS_M, WARPS_N, BK, STAGES, MIN_BLOCKS,
// J_OUTER (the order of one index's FMAs), PAD_B, and the four above.

#include "bigtile.cuh"

// One block per 128×128 tile (by default), the whole reduction in one pass.
extern "C" __global__ void KERNEL_BOUNDS bigtile(GEMM_ARGS) {
    extern __shared__ __align__(16) float smem[];
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[8][16];
    zero(acc);
    product_steps(acc, smem, A, B, M, N, K, row0, col0, 0, (N + BK - 1) / BK);
    store_tile(acc, C, M, K, row0, col0);
}
