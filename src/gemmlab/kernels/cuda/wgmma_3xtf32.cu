// 3xTF32 on Hopper: FP32 accuracy from TF32 tensor cores, three products per step.
//
// x = hi + lo with hi = tf32(x) and lo = tf32(x − hi) carries 21 of FP32's 24
// significant bits, and a·b ≈ hi_a·hi_b + hi_a·lo_b + lo_a·hi_b, the dropped
// lo_a·lo_b being 2⁻²² smaller. The transpose pre-pass writes Bᵀ's two planes;
// A is read by TMA as it lies and split by the consumers in registers, as step
// 4.4 rounds it.
//
// Structure of step 4.4 (a producer warpgroup, two consumers, persistent grid,
// 4 stages), with a 128×128 tile so that a stage (A, Bᵀhi, Bᵀlo: 3 × 16 KB)
// keeps the pipeline 4 deep. Per step each consumer issues 12 m64n128k8
// wgmmas (two groups of 6, below) into a fresh tile, small terms first, and
// adds the tile to its accumulator with IEEE FP32 adds: the tensor cores' own
// accumulation truncates, and chained over N = 8192 that error would exceed
// plain FP32's.
//
// Specials: where the split meets ±Inf or NaN, a correction term can be
// 0 · ±Inf = NaN where the true product is ±Inf. So a special value raises a
// flag instead: the pre-pass raises it for B, the consumers for A (they see
// every element of A as they split it; a finite value that rounds past FLT_MAX
// raises it too), and the host's last step recomputes C in strict FP32 when it
// is set.
//
// Each step is issued in two halves (reduction 0–15 and 16–31), each its own
// wgmma group with its own fragment registers, so that the split of one half
// runs while the tensor cores work on the other. AHEAD 1: the next step's
// first half is split before this step's promotion, while this step's second
// half runs; between two steps only the promotion remains (AHEAD 0: after it,
// as first written). The first product of a step starts the fresh tile with
// scale-d 0, so the tile is never zeroed. Register budget: 64 accumulators,
// 64 of the fresh tile and 2 × 16 fragments fit the consumers' 232 (ptxas
// allocates the consumer code within its setmaxnreg claim: registers up to R190
// appear, though its report says 168, the figure at the kernel's entry).
//
// SPLIT 1: split-K on the persistent grid, as wgmma_swap.cu's. A unit of work is a part of
// a tile's reduction (the host's `parts`, cuda/handoff.py: where the 128×128 tiles leave SMs
// idle, as over a long reduction onto few outputs), and the producer and the consumers walk the
// same units as they walk tiles without it. A part's promoted sums meet the tile's other parts
// in splitk.cuh's tree, the consumers as a team of 256 at named barrier 1 (the producer
// warpgroup has left by then); the last to arrive stores the tile, the others go on to their
// next unit. Each part still promotes every step in IEEE FP32, and the tree adds in a fixed
// order: a call gives the same bits every time. `3xtf32` runs it where it splits in one
// wave (experiments/3x-split).
#include "hopper.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#ifndef AHEAD
#define AHEAD 1
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
#define BM 128
#define BN 128
#define BK 32
#define THREADS 384
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)
#define STAGE_BYTES (A_BYTES + 2 * B_BYTES)
// AHEAD waits for the next stage before releasing this one: with one stage, forever.
static_assert(!AHEAD || STAGES >= 2, "AHEAD needs two stages or more");
// N >= 1 (the host validates it): with no reduction step the consumers would wait
// for a stage the producer never loads.
// The smallest magnitude (as bits) that tf32_rna takes past TF32's largest
// finite value, 0x7f7fe000: that plus half its unit in the last place.
#define ROUNDS_PAST_MAX 0x7f7ff000u

// Rounding to TF32 on the bits: the half-ulp added to the magnitude, then the
// low 13 bits dropped. For finite x that does not round past FLT_MAX this is
// exactly cvt.rna (to nearest, ties away), in two integer operations where
// cvt.rna.tf32.f32 compiles to four or more; the consumers' integer work costs
// clock under the power cap (measured in wgmma_3xtf32.md).
__device__ __forceinline__ unsigned tf32_rna(unsigned bits) { return (bits + 0x1000u) & 0xffffe000u; }

// This thread's A fragments for half `h` of one stage, split: TMA wrote each
// 128-byte row r with 16-byte chunk j at chunk j ^ (r % 8), and this thread's
// rows have r % 8 == g. hi = tf32(x), lo = tf32(x − hi) (x − hi is exact).
// `worst` keeps the largest magnitude's bits: from ROUNDS_PAST_MAX up, x is ±Inf
// or NaN (whose bits the add may carry anywhere, even to ±0) or rounds past
// FLT_MAX, and the host's fallback recomputes C.
__device__ __forceinline__ void split_a(unsigned (&hi)[8], unsigned (&lo)[8], unsigned& worst,
                                        const float* row, int g, int q, int h) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        const int kk = 2 * h + j;
        const int c0 = (((2 * kk) ^ g) << 2) + q, c1 = (((2 * kk + 1) ^ g) << 2) + q;
        const float x[4] = {row[c0], row[8 * BK + c0], row[c1], row[8 * BK + c1]};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const unsigned top = tf32_rna(__float_as_uint(x[e]));
            hi[4 * j + e] = top;
            lo[4 * j + e] = tf32_rna(__float_as_uint(x[e] - __uint_as_float(top)));
            worst = max(worst, __float_as_uint(x[e]) & 0x7fffffffu);
        }
    }
}

// The reduction steps [first, last) of unit u: part u % parts of tile u / parts (one part, the
// whole reduction, without SPLIT).
__device__ __forceinline__ void unit_steps(int u, int steps, int parts, int& first, int& last) {
    const int part = u % parts;
    first = steps * part / parts;
    last = steps * (part + 1) / parts;
}
__device__ __forceinline__ int unit_length(int u, int steps, int parts) {
    int first, last;
    unit_steps(u, steps, parts, first, last);
    return last - first;
}

// One consumer warpgroup: rows 64·half… of the tile, over a flat sequence of
// (unit, step) pairs, so that the step ahead may belong to the next unit.
struct Consumer {
    const float *As, *His, *Los;
    uint64_t *full, *empty;
    float* C;
    int M, K, units, tiles_m, tiles_n, steps, parts;
    int half, g, q, warp, thread;
    int unit, t = 0, it = 0;  // where the sequence is: t counts the unit's steps, `it` all of them
    int length = 0;           // the unit's steps: worked out once a unit, not in every step's integer work
    unsigned worst = 0;
#if SPLIT
    float* work;
    unsigned* counters;
#endif

    __device__ __forceinline__ const float* rows(int s) const {
        return As + s * (A_BYTES / 4) + (64 * half + 16 * warp + g) * BK;
    }
    __device__ __forceinline__ void prepare_first(unsigned (&hi)[8], unsigned (&lo)[8], int at) {
        const int s = at % STAGES;
        mbar_wait(&full[s], (at / STAGES) & 1);
        split_a(hi, lo, worst, rows(s), g, q, 0);
    }
    // Half h of a step's three products into the fresh tile, small terms first.
    template <int H>
    __device__ __forceinline__ void issue(float (&part)[BN / 2], const unsigned (&hi)[8],
                                          const unsigned (&lo)[8], int s) {
        const uint64_t dh = desc_k_major_sw128(His + s * (B_BYTES / 4)) + 4 * H;
        const uint64_t dl = desc_k_major_sw128(Los + s * (B_BYTES / 4)) + 4 * H;
        wgmma_fence();
        if (H == 0) {
            wgmma_tf32_ra<BN, 0>(part, &lo[0], dh);
        } else {
            wgmma_tf32_ra<BN>(part, &lo[0], dh);
        }
        wgmma_tf32_ra<BN>(part, &lo[4], dh + 2);
        wgmma_tf32_ra<BN>(part, &hi[0], dl);
        wgmma_tf32_ra<BN>(part, &hi[4], dl + 2);
        wgmma_tf32_ra<BN>(part, &hi[0], dh);
        wgmma_tf32_ra<BN>(part, &hi[4], dh + 2);
        wgmma_commit();
    }
    // Step `it`: first-half fragments (hi0, lo0) were split before; leaves the
    // next step's there. Returns false after the last step of the sequence.
    __device__ __forceinline__ bool step(float (&acc)[BN / 2], float (&part)[BN / 2], unsigned (&hi0)[8],
                                         unsigned (&lo0)[8], unsigned (&hi1)[8], unsigned (&lo1)[8],
                                         int stride) {
        const int s = it % STAGES;
        issue<0>(part, hi0, lo0, s);
        split_a(hi1, lo1, worst, rows(s), g, q, 1);  // the previous step's second half is complete
        issue<1>(part, hi1, lo1, s);
        const bool unit_done = t + 1 == length;
        const int next_unit = unit_done ? unit + stride : unit;
        const bool more = next_unit < units;
        if (AHEAD) {
            wgmma_wait<1>();  // the first half's products are done with (hi0, lo0)
            if (more) prepare_first(hi0, lo0, it + 1);
        }
        wgmma_wait<0>();
        fence_registers(part);
        if (thread == 0) mbar_arrive(&empty[s]);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) acc[i] += part[i];  // promotion, in IEEE FP32
        if (unit_done) {
            const int tile = unit / parts;
            bool whole = true;  // this warpgroup holds the tile's whole sum
#if SPLIT
            // The 256 consumers, threads 128-383, are the team.
            if (parts > 1) whole = splitk::combine<BN / 2, 256, 2, false, 1, 128>(acc, work, counters, tile,
                                                                                  unit % parts, parts);
#endif
            int tm, tn;
            tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
            if (whole) store_tile(acc, C, M, K, tm * BM + 64 * half, tn * BN, thread);
#pragma unroll
            for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;
        }
        if (!AHEAD && more) prepare_first(hi0, lo0, it + 1);
        unit = next_unit;
        t = unit_done ? 0 : t + 1;
        if (unit_done) length = unit_length(unit, steps, parts);
        ++it;
        return more;
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_3xtf32(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_hi,
                 const __grid_constant__ TmaDesc tma_lo, float* __restrict__ C, int M, int N, int K,
                 int* special SPLIT_ARGS) {
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
#if SPLIT
    // A unit of no steps would leave the consumers waiting for a stage the producer never loads
    // (the host's parts keep two steps a part at least: cuda/handoff.parts); fewer parts than
    // asked use fewer of the slots and counters sized for them.
    parts = max(1, min(parts, steps));
#else
    const int parts = 1;
#endif
    const int units = tiles * parts;  // unit u: part u % parts of tile u / parts

    if (tid == 0) {
        tma_prefetch_desc(&tma_a);
        tma_prefetch_desc(&tma_hi);
        tma_prefetch_desc(&tma_lo);
    }
    ready_stages<STAGES, 1>(full, empty, 2);  // one arrival per consumer warpgroup

    if (wg == 0) {
        regs_release<40>();
        if (tid != 0) return;
        int it = 0;
        for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
            int tm, tn, first, last;
            tile_coords(unit / parts, tiles_m, tiles_n, GROUP_M, tm, tn);
            unit_steps(unit, steps, parts, first, last);
            for (int t = first; t < last; ++t, ++it) {
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
    if (blockIdx.x >= units) return;
    const int lane = tid % 32;
    Consumer c{As, His, Los, full, empty, C, M, K, units, tiles_m, tiles_n, steps, parts,
               wg - 1, lane / 4, lane % 4, (tid % 128) / 32, tid % 128, static_cast<int>(blockIdx.x)};
    c.length = unit_length(c.unit, steps, parts);
#if SPLIT
    c.work = work;
    c.counters = counters;
#endif
    float acc[BN / 2], part[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = part[i] = 0.0f;
    unsigned hi0[8], lo0[8], hi1[8], lo1[8];  // the two halves of a step, each its own wgmma group
    c.prepare_first(hi0, lo0, 0);
    while (c.step(acc, part, hi0, lo0, hi1, lo1, gridDim.x)) {
    }
    if (c.worst >= ROUNDS_PAST_MAX) *special = 1;  // ±Inf, NaN or FLT_MAX-rounding in A: the fallback recomputes C
}
