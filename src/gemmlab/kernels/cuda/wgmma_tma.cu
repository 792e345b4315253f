// wgmma + TMA: Hopper's tensor-core path. The copy engine (TMA) moves whole
// tiles into shared memory and signals an mbarrier; a warpgroup (4 warps)
// issues one asynchronous `wgmma` that reads both operands straight from
// shared memory.
//
// A 256-thread block (2 warpgroups) owns a 128×256 tile of C; warpgroup w the
// 64×256 half at rows 64·w, as 128 FP32 accumulators per thread. Per reduction
// step of 32 floats (one 128-byte row, swizzled by TMA), thread 0 asks TMA for
// A[128×32] and Bᵀ[256×32] (48 KB); STAGES steps are in flight. Each warpgroup
// waits for its step's `full` barrier, issues four m64n256k8 wgmmas, waits for
// them, and arrives on the step's `empty` barrier; thread 0 refills the stage
// once both warpgroups have arrived.
//
// The operands come from the host's pre-pass: Bᵀ (TF32 wgmma needs the
// reduction index contiguous in both operands) and A, both already rounded to
// TF32, because wgmma itself would truncate. Tiles past the edges read zeros
// (TMA), and the epilogue stores only inside C: any M and K.
#include "hopper.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#define BM 128
#define BN 256
#define BK 32
#define THREADS 256
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)
#define STAGE_BYTES (A_BYTES + B_BYTES)

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_b,
              float* __restrict__ C, int M, int N, int K) {
    extern __shared__ unsigned char raw[];
    const StageMemory<STAGES, A_BYTES, B_BYTES> mem(raw);
    float *As = mem.a, *Bs = mem.b[0];
    uint64_t *full = mem.full, *empty = mem.empty;
    const int tid = threadIdx.x, wg = tid / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int steps = (N + BK - 1) / BK;

    auto issue = [&](int t, int s) {
        mbar_arrive_expect(&full[s], STAGE_BYTES);
        tma_load_2d(As + s * (A_BYTES / 4), &tma_a, &full[s], t * BK, row0);
        tma_load_2d(Bs + s * (B_BYTES / 4), &tma_b, &full[s], t * BK, col0);
    };
    if (tid == 0) {
        tma_prefetch_desc(&tma_a);
        tma_prefetch_desc(&tma_b);
    }
    ready_stages<STAGES, 1>(full, empty, 2);  // one arrival per warpgroup
    if (tid == 0)
        for (int s = 0; s < STAGES && s < steps; ++s) issue(s, s);

    float d[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
    for (int t = 0; t < steps; ++t) {
        const int s = t % STAGES;
        const unsigned phase = (t / STAGES) & 1;
        mbar_wait(&full[s], phase);
        const uint64_t da = desc_k_major_sw128(As + s * (A_BYTES / 4) + wg * 64 * BK);
        const uint64_t db = desc_k_major_sw128(Bs + s * (B_BYTES / 4));
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32<BN>(d, da + 2 * kk, db + 2 * kk);  // +32 B
        wgmma_commit();
        wgmma_wait<0>();
        fence_registers(d);
        if (tid % 128 == 0) mbar_arrive(&empty[s]);
        if (tid == 0 && t + STAGES < steps) {
            mbar_wait(&empty[s], phase);
            issue(t + STAGES, s);
        }
    }
    store_tile(d, C, M, K, row0 + 64 * wg, col0, tid % 128);
}
