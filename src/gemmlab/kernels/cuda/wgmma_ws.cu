// Warp specialisation: one warpgroup only feeds, two only multiply, and the
// block stays resident, walking over tiles (a persistent grid).
//
// 384 threads = 3 warpgroups. Warpgroup 0, the producer, gives most of its
// registers back (`setmaxnreg.dec` to 40) and one of its threads issues every
// TMA copy. Warpgroups 1 and 2, the consumers, claim those registers
// (`setmaxnreg.inc` to 232); each multiplies a 64×256 half of the 128×256 tile
// with m64n256k8 wgmmas. Two barriers per stage order the hand-offs: `full`
// (TMA's bytes landed) and `empty` (both consumers are done with the stage).
// The producer runs ahead into the next tile while the consumers store the last.
//
// A_FROM_REGS: wgmma truncates its inputs to TF32, and rounding to nearest is
// wanted. B was rounded by the transpose pre-pass; A is read by TMA as it lies
// and each consumer loads its A fragments from shared memory into registers,
// rounding them (`cvt.rna`), and passes them to wgmma as the register operand.
// With A_FROM_REGS 0, A comes from shared memory and must be rounded before
// (the host's pre-pass).
// INFLIGHT: wgmma groups left running while the next step is issued (0 or 1);
// a stage is released when the group that read it has completed.
//
// CLUSTER 2: blocks run in pairs (a thread-block cluster) on vertically
// adjacent tiles, which need the same columns of Bᵀ: each block loads half of
// the B stage and the copy engine writes it into both blocks (TMA multicast),
// so each block fetches 32 KB per stage instead of 48. A stage is refilled
// only when the consumers of both blocks are done with it (remote arrivals).
//
// Block (or pair) b takes tiles b, b + the grid, …, in groups of GROUP_M tile
// rows, so that the blocks working at one time share rows of A and columns of
// B in L2.
#include "hopper.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#ifndef A_FROM_REGS
#define A_FROM_REGS 1
#endif
#ifndef INFLIGHT
#define INFLIGHT 1
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef CLUSTER
#define CLUSTER 1
#endif
#define BM 128
#define BN 256
#define BK 32
#define THREADS 384
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)
#define STAGE_BYTES (A_BYTES + B_BYTES)

// This thread's A fragments for one stage, rounded to TF32. TMA wrote each
// 128-byte row r with 16-byte chunk j at chunk j ^ (r % 8); this thread's rows
// are 8 apart, so both have r % 8 == g.
__device__ __forceinline__ void load_a(unsigned (&af)[16], const float* row, int g, int q) {
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
        const int lo = (((2 * kk) ^ g) << 2) + q, hi = (((2 * kk + 1) ^ g) << 2) + q;
        af[4 * kk + 0] = tf32_bits(row[lo]);
        af[4 * kk + 1] = tf32_bits(row[8 * BK + lo]);
        af[4 * kk + 2] = tf32_bits(row[hi]);
        af[4 * kk + 3] = tf32_bits(row[8 * BK + hi]);
    }
}

struct Consumer {
    float* As;
    float* Bs;
    uint64_t* full;
    uint64_t* empty;
    int half, g, q, warp;
    int it = 0, held = -1;  // stage counter; the stage an in-flight group still reads

    // One reduction step: wait for its stage, issue its four wgmmas, release what is done.
    __device__ __forceinline__ void step(float (&d)[BN / 2], unsigned (&af)[16]) {
        const int s = it % STAGES;
        mbar_wait(&full[s], (it / STAGES) & 1);
        const uint64_t db = desc_k_major_sw128(Bs + s * (B_BYTES / 4));
#if A_FROM_REGS
        load_a(af, As + s * (A_BYTES / 4) + (64 * half + 16 * warp + g) * BK, g, q);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32_ra<BN>(d, &af[4 * kk], db + 2 * kk);
#else
        const uint64_t da = desc_k_major_sw128(As + s * (A_BYTES / 4) + 64 * half * BK);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32<BN>(d, da + 2 * kk, db + 2 * kk);
#endif
        wgmma_commit();
        wgmma_wait<INFLIGHT>();
        release(INFLIGHT ? held : s);
        held = s;
        ++it;
    }
    __device__ __forceinline__ void release(int s) {
        if (s < 0 || threadIdx.x % 128 != 0) return;
#if CLUSTER == 1
        mbar_arrive(&empty[s]);
#else
        for (unsigned cta = 0; cta < CLUSTER; ++cta) mbar_arrive_remote(&empty[s], cta);
#endif
    }
    // The end of a tile: every group complete, every stage released.
    __device__ __forceinline__ void drain(float (&d)[BN / 2]) {
        wgmma_wait<0>();
        fence_registers(d);
        if (INFLIGHT) release(held);
        held = -1;
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_ws(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_b,
             float* __restrict__ C, int M, int N, int K) {
    extern __shared__ unsigned char raw[];
    const StageMemory<STAGES, A_BYTES, B_BYTES> mem(raw);
    float *As = mem.a, *Bs = mem.b[0];
    uint64_t *full = mem.full, *empty = mem.empty;
    const int tid = threadIdx.x, wg = tid / 128;
    // A cluster works on CLUSTER vertically adjacent tiles: "groups" of tile rows.
    const int tiles_m = (M + BM * CLUSTER - 1) / (BM * CLUSTER), tiles_n = (K + BN - 1) / BN;
    const int tiles = tiles_m * tiles_n, steps = (N + BK - 1) / BK;
    const int first = blockIdx.x / CLUSTER, stride = gridDim.x / CLUSTER;
    const int rank = CLUSTER == 1 ? 0 : cluster_rank();

    if (tid == 0) {
        tma_prefetch_desc(&tma_a);
        tma_prefetch_desc(&tma_b);
    }
    ready_stages<STAGES, CLUSTER>(full, empty, 2 * CLUSTER);  // one arrival per consumer warpgroup of the cluster

    if (wg == 0) {
        regs_release<40>();
        if (tid != 0) return;
        int it = 0;
        for (int tile = first; tile < tiles; tile += stride) {
            int tm, tn;
            tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
            tm = tm * CLUSTER + rank;
            for (int t = 0; t < steps; ++t, ++it) {
                const int s = it % STAGES;
                const unsigned free_parity = ((it / STAGES) & 1) ^ 1;  // a fresh stage counts as free
#if CLUSTER == 1
                mbar_wait(&empty[s], free_parity);
                mbar_arrive_expect(&full[s], STAGE_BYTES);
                tma_load_2d(As + s * (A_BYTES / 4), &tma_a, &full[s], t * BK, tm * BM);
                tma_load_2d(Bs + s * (B_BYTES / 4), &tma_b, &full[s], t * BK, tn * BN);
#else
                // Both blocks' consumers are done with stage s: its previous phase is over
                // here and in the peer, into which half of B is about to be written. (Their
                // reads completed before they arrived: no cluster-scope acquire is needed.)
                mbar_wait(&empty[s], free_parity);
                mbar_arrive_expect(&full[s], STAGE_BYTES);  // our A and both halves of B
                tma_load_2d(As + s * (A_BYTES / 4), &tma_a, &full[s], t * BK, tm * BM);
                tma_load_2d_multicast(Bs + s * (B_BYTES / 4) + rank * (BN / CLUSTER) * BK, &tma_b,
                                      &full[s], t * BK, tn * BN + rank * (BN / CLUSTER),
                                      (1 << CLUSTER) - 1);
#endif
            }
        }
        return;
    }

    regs_claim<232>();
    const int lane = tid % 32;
    Consumer c{As, Bs, full, empty, wg - 1, lane / 4, lane % 4, (tid % 128) / 32};
    float d[BN / 2];
    unsigned af0[16], af1[16];  // two sets: an in-flight wgmma may still read the other
    for (int tile = first; tile < tiles; tile += stride) {
        int tm, tn;
        tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
        tm = tm * CLUSTER + rank;
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
        for (int t = 0; t < steps; t += 2) {
            c.step(d, af0);
            if (t + 1 < steps) c.step(d, af1);
        }
        c.drain(d);
        store_tile(d, C, M, K, tm * BM + 64 * c.half, tn * BN, tid % 128);
    }
#if CLUSTER > 1
    cluster_sync();  // stay resident until the peer has made its last arrival on our barriers
#endif
}
