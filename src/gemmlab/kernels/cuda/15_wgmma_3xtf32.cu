// 3xTF32 on Hopper: FP32 accuracy from TF32 tensor cores, three products per step.
//
// x = hi + lo with hi = tf32(x) and lo = tf32(x − hi) carries 21 of FP32's 24
// significant bits, and a·b ≈ hi_a·hi_b + hi_a·lo_b + lo_a·hi_b, the dropped
// lo_a·lo_b being 2⁻²² smaller. The transpose pre-pass writes Bᵀ's two planes;
// A is read by TMA as it lies and split by the consumers in registers, as rung
// 18 rounds it.
//
// Structure of rung 18 (a producer warpgroup, two consumers, persistent grid,
// 4 stages), with a 128×128 tile so that a stage (A, Bᵀhi, Bᵀlo: 3 × 16 KB)
// keeps the pipeline 4 deep. Per step each consumer issues 12 m64n128k8
// wgmmas into a fresh tile, small terms first, waits for them, and adds the
// tile to its accumulator with IEEE FP32 adds: the tensor cores' own
// accumulation truncates, and chained over N = 8192 that error would exceed
// plain FP32's.
//
// Specials: where a is ±Inf or NaN, its lo is 0 and its hi is replaced by 0 in
// the hi_a·lo_b term, so only hi_a·hi_b carries it. A special in B would need
// the same on the other side; there the pre-pass raises a flag and the host's
// last step recomputes C in plain FP32.
#include "hopper.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#define BM 128
#define BN 128
#define BK 32
#define THREADS 384
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)
#define STAGE_BYTES (A_BYTES + 2 * B_BYTES)

// This thread's A fragments for one stage, split: TMA wrote each 128-byte row r
// with 16-byte chunk j at chunk j ^ (r % 8), and this thread's rows have r % 8 == g.
__device__ __forceinline__ void split_a(unsigned (&hi)[16], unsigned (&hi_c)[16], unsigned (&lo)[16],
                                        const float* row, int g, int q) {
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
        const int c0 = (((2 * kk) ^ g) << 2) + q, c1 = (((2 * kk + 1) ^ g) << 2) + q;
        const float x[4] = {row[c0], row[8 * BK + c0], row[c1], row[8 * BK + c1]};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const float h = tf32_hi(x[e]);
            hi[4 * kk + e] = __float_as_uint(h);
            hi_c[4 * kk + e] = finite_bits(x[e]) ? __float_as_uint(h) : 0u;
            lo[4 * kk + e] = __float_as_uint(tf32_lo(x[e], h));
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_3xtf32(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_hi,
                 const __grid_constant__ TmaDesc tma_lo, float* __restrict__ C, int M, int N, int K) {
    extern __shared__ unsigned char raw[];
    unsigned char* base = swizzle_aligned(raw);
    float* As = reinterpret_cast<float*>(base);
    float* His = reinterpret_cast<float*>(base + STAGES * A_BYTES);
    float* Los = reinterpret_cast<float*>(base + STAGES * (A_BYTES + B_BYTES));
    uint64_t* full = reinterpret_cast<uint64_t*>(base + STAGES * STAGE_BYTES);
    uint64_t* empty = full + STAGES;
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (K + BN - 1) / BN, tiles = tiles_m * tiles_n;
    const int steps = (N + BK - 1) / BK;

    if (tid == 0) {
        tma_prefetch_desc(&tma_a);
        tma_prefetch_desc(&tma_hi);
        tma_prefetch_desc(&tma_lo);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 2);  // one arrival per consumer warpgroup
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        regs_release<40>();
        if (tid != 0) return;
        int it = 0;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int tm, tn;
            tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
            for (int t = 0; t < steps; ++t, ++it) {
                const int s = it % STAGES;
                mbar_wait(&empty[s], ((it / STAGES) & 1) ^ 1);  // a fresh stage counts as free
                mbar_arrive_expect(&full[s], STAGE_BYTES);
                tma_load_2d(As + s * (A_BYTES / 4), &tma_a, &full[s], t * BK, tm * BM);
                tma_load_2d(His + s * (B_BYTES / 4), &tma_hi, &full[s], t * BK, tn * BN);
                tma_load_2d(Los + s * (B_BYTES / 4), &tma_lo, &full[s], t * BK, tn * BN);
            }
        }
        return;
    }

    regs_claim<232>();
    const int half = wg - 1, lane = tid % 32, g = lane / 4, q = lane % 4, warp = (tid % 128) / 32;
    float acc[BN / 2], part[BN / 2];
    unsigned hi[16], hi_c[16], lo[16];
    int it = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        int tm, tn;
        tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
        for (int t = 0; t < steps; ++t, ++it) {
            const int s = it % STAGES;
            mbar_wait(&full[s], (it / STAGES) & 1);
            split_a(hi, hi_c, lo, As + s * (A_BYTES / 4) + (64 * half + 16 * warp + g) * BK, g, q);
            const uint64_t dh = desc_k_major_sw128(His + s * (B_BYTES / 4));
            const uint64_t dl = desc_k_major_sw128(Los + s * (B_BYTES / 4));
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) part[i] = 0.0f;
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32_ra<BN>(part, &lo[4 * kk], dh + 2 * kk);
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32_ra<BN>(part, &hi_c[4 * kk], dl + 2 * kk);
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32_ra<BN>(part, &hi[4 * kk], dh + 2 * kk);
            wgmma_commit();
            wgmma_wait<0>();
            fence_registers(part);
            if (tid % 128 == 0) mbar_arrive(&empty[s]);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] += part[i];  // promotion, in IEEE FP32
        }
        store_tile(acc, C, M, K, tm * BM + 64 * half, tn * BN, tid % 128);
    }
}
