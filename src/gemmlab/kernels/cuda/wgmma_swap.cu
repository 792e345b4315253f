// The operands swapped: C is made as Cᵀ = Bᵀ·Aᵀ, so that neither needs a pre-pass.
//
// TF32 wgmma reads a shared-memory operand only with the reduction index
// contiguous. A (M×N) has it; B (N×K) has not, and step 4.4 transposes it
// before every product. Here the roles turn: wgmma's M side is C's columns,
// fed from registers, where any layout can be gathered; its N side is C's rows,
// read by descriptor from A's tile as TMA lays it. Rounding needs no
// instruction either: the tensor maps are of type TFLOAT32, and the copy
// engine rounds each value to nearest on its way into shared memory.
//
// 384 threads = 3 warpgroups, as in step 4.4. Warpgroup 0 produces: it keeps 40
// registers and one thread issues the copies of each stage (A's 256×32 tile,
// and B's 32×128 tile as four 32×32 boxes). Warpgroups 1 and 2 consume, each a
// 64-column half of the 256×128 tile of C: per reduction step of 8 they gather
// their 64×8 slice of Bᵀ from shared memory into registers (4 values each) and
// issue one m64n256k8 wgmma against A's tile, 128 accumulators per thread.
//
// CLUSTER 2: blocks run in pairs on horizontally adjacent tiles, which need
// the same rows of A: each loads half of the A tile and TMA writes it into both
// (a third less traffic from L2 per block).
// PIPE p: one commit group per wgmma, p of them left running while the next
// reduction step's operand is gathered (0: each waited for at once).
// SPLIT 1: split-K on the persistent grid. A unit of work is a part of a tile's reduction
// (the host's `parts`, cuda/handoff.py: where the tiles leave SMs idle, as over a long
// reduction onto few outputs); a cluster walks units as it walks tiles without it. The
// consumers of a part meet the tile's other parts in splitk.cuh's tree, as a team at named
// barrier 1 (the producer warpgroup has left), and the last to arrive stores the tile; the
// others go on to their next unit. `tf32` runs it where it splits in one wave (experiments/swap-split).
// What each measured is in wgmma_swap.md; the launches run CLUSTER 2, PIPE 2.
#include "hopper.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef CLUSTER
#define CLUSTER 1
#endif
#ifndef PIPE
#define PIPE 2
#endif
#ifndef SPLIT
#define SPLIT 0
#endif
#if SPLIT
#include "splitk.cuh"
// Scratch for the parts' sums, the hand-off counters, and the parts per tile.
#define SPLIT_ARGS , float* __restrict__ work, unsigned* __restrict__ counters, int parts
#else
#define SPLIT_ARGS
#endif
#define BM 256  // rows of C per tile: wgmma's N, from A's tile in shared memory
#define BN 128  // columns of C per tile: 64 per consumer, wgmma's M, from registers
#define BK 32
#define BOX 32  // columns of B per TMA box: the 128-byte swizzle's span
#define THREADS 384
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BK * BN * 4)
#define STAGE_BYTES (A_BYTES + B_BYTES)
static_assert(PIPE >= 0 && PIPE < BK / 8, "a stage is released after the PIPE-th wgmma of the next");

// Where this thread's four values of reduction step 0 lie in a B stage (in floats).
// Register j of a step holds Bᵀ(row, col) = B[n][k] at row = k: g (+8 for j odd) of the
// warp's 16 columns, col = n: q (+4 for j ≥ 2) of the step's 8 reduction indices.
// The stage holds four boxes of 32 rows n × 32 columns k; TMA's swizzle put 16-byte
// chunk j of row n at chunk j ^ (n % 8). A step is 8 rows further (n % 8 unchanged).
struct Gather {
    int at[4];
    __device__ __forceinline__ Gather(int half, int warp, int g, int q) {
        const int col = 64 * half + 16 * warp + g;  // the tile column (k) of register 0
        const int box = col / BOX, chunk = (col % BOX) / 4, within = col % 4;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int n = q + 4 * (j >> 1), c = chunk + 2 * (j & 1);  // +8 columns = 2 chunks
            at[j] = box * (BK * BOX) + n * BOX + ((c ^ n) << 2) + within;
        }
    }
    // The register operand of reduction step kk of a stage. The values were rounded by
    // the copy engine: their bits are the operand as they are.
    __device__ __forceinline__ void load_step(unsigned* bf, const float* stage, int kk) const {
#pragma unroll
        for (int j = 0; j < 4; ++j) bf[j] = __float_as_uint(stage[at[j] + kk * 8 * BOX]);
    }
};

// One warpgroup's 64×256 block of Cᵀ, stored as C: register i holds Cᵀ(row, col) =
// C[col][row] at row 16·warp + g (+8 when bit 1 of i is set), col 8·(i/4) + 2q + i%2.
// A store instruction writes 8 consecutive floats of each of 4 rows of C: whole sectors.
__device__ __forceinline__ void store_transposed(const float (&d)[BM / 2], float* C, int M, int K, int row0,
                                                 int col0, int thread) {
    const int warp = thread / 32, g = (thread % 32) / 4, q = thread % 4;
#pragma unroll
    for (int i = 0; i < BM / 2; ++i) {
        const int k = col0 + 16 * warp + g + 8 * ((i >> 1) & 1);
        const int m = row0 + 8 * (i >> 2) + 2 * q + (i & 1);
        if (m < M && k < K) C[(size_t)m * K + k] = d[i];
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_swap(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_b,
               float* __restrict__ C, int M, int N, int K SPLIT_ARGS) {
    extern __shared__ unsigned char raw[];
    const StageMemory<STAGES, A_BYTES, B_BYTES> mem(raw);
    float *As = mem.a, *Bs = mem.b[0];
    uint64_t *full = mem.full, *empty = mem.empty;
    const int tid = threadIdx.x, wg = tid / 128;
    // A cluster works on CLUSTER horizontally adjacent tiles: "groups" of tile columns.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (K + BN * CLUSTER - 1) / (BN * CLUSTER);
    const int tiles = tiles_m * tiles_n, steps = (N + BK - 1) / BK;
#if !SPLIT
    const int parts = 1;
#endif
    const int units = tiles * parts;  // unit u: part u % parts of tile u / parts
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
        for (int unit = first; unit < units; unit += stride) {
            const int tile = unit / parts, part = unit % parts;
            int tm, tn;
            tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
            tn = tn * CLUSTER + rank;
            for (int t = steps * part / parts, last = steps * (part + 1) / parts; t < last; ++t, ++it) {
                const int s = it % STAGES;
                // Both blocks' consumers are done with stage s (a fresh stage counts as free).
                mbar_wait(&empty[s], ((it / STAGES) & 1) ^ 1);
                mbar_arrive_expect(&full[s], STAGE_BYTES);  // our B and the cluster's whole A tile
#if CLUSTER == 1
                tma_load_2d(As + s * (A_BYTES / 4), &tma_a, &full[s], t * BK, tm * BM);
#else
                tma_load_2d_multicast(As + s * (A_BYTES / 4) + rank * (BM / CLUSTER) * BK, &tma_a,
                                      &full[s], t * BK, tm * BM + rank * (BM / CLUSTER),
                                      (1 << CLUSTER) - 1);
#endif
#pragma unroll
                for (int box = 0; box < BN / BOX; ++box)
                    tma_load_2d(Bs + s * (B_BYTES / 4) + box * (BK * BOX), &tma_b, &full[s],
                                tn * BN + box * BOX, t * BK);
            }
        }
        return;
    }

    regs_claim<232>();
    const int half = wg - 1, lane = tid % 32, warp = (tid % 128) / 32, thread = tid % 128;
    const Gather gather(half, warp, lane / 4, lane % 4);
    float d[BM / 2];
    unsigned bf[16];  // a 4-register operand per reduction step of a stage

    int it = 0, held = -1;  // stage counter; the stage that running wgmmas may still read
    // The stage's reads are complete: release it here and in the peer.
    auto release = [&](int s) {
        if (s < 0 || thread != 0) return;
#if CLUSTER == 1
        mbar_arrive(&empty[s]);
#else
        for (unsigned cta = 0; cta < CLUSTER; ++cta) mbar_arrive_remote(&empty[s], cta);
#endif
    };
    for (int unit = first; unit < units; unit += stride) {
        const int tile = unit / parts, part = unit % parts;
        int tm, tn;
        tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
        tn = tn * CLUSTER + rank;
#pragma unroll
        for (int i = 0; i < BM / 2; ++i) d[i] = 0.0f;
        for (int t = steps * part / parts, last = steps * (part + 1) / parts; t < last; ++t, ++it) {
            const int s = it % STAGES;
            mbar_wait(&full[s], (it / STAGES) & 1);
            const float* bs = Bs + s * (B_BYTES / 4);
            const uint64_t da = desc_k_major_sw128(As + s * (A_BYTES / 4));
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) {
                // One commit group per wgmma, PIPE left running. Register set kk was last
                // read by the wgmma BK / 8 before this one: done, since PIPE < BK / 8.
                gather.load_step(&bf[4 * kk], bs, kk);
                wgmma_fence();
                wgmma_tf32_ra<BM>(d, &bf[4 * kk], da + 2 * kk);
                wgmma_commit();
                wgmma_wait<PIPE>();
                // The last wgmma of the previous stage is done (PIPE 0: of this one).
                if (kk == PIPE - 1 || (PIPE == 0 && kk == BK / 8 - 1)) {
                    release(PIPE ? held : s);
                    held = -1;
                }
            }
            if (PIPE) held = s;
        }
        wgmma_wait<0>();
        fence_registers(d);
        release(held);
        held = -1;
#if SPLIT
        // The 256 consumers, threads 128-383, are the team; this block's own tile of C names the
        // tile's slots and counters (tiles_n groups of CLUSTER tiles a row of tiles).
        if (parts > 1 && !splitk::combine<BM / 2, 256, 2, false, 1, 128>(d, work, counters,
                                                                         tm * tiles_n * CLUSTER + tn, part, parts))
            continue;  // another part of this tile goes on with its sum
#endif
        store_transposed(d, C, M, K, tm * BM, tn * BN + 64 * half, thread);
    }
#if CLUSTER > 1
    cluster_sync();  // stay resident until the peer has made its last arrival on our barriers
#endif
}
