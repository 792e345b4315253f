// Big thread tiles: 128 accumulators per thread, a multi-stage cp.async
// pipeline, strict FP32 (IEEE FMA, each output accumulated in reduction order).
//
// Warptile (step 3.1) gives each thread 8×8 outputs: per reduction index it
// issues 4 LDS.128 for 64 FFMA, and moves its A tile through registers. Here
// each thread owns 8×16 outputs, so per reduction index it issues 6 LDS.128
// for 128 FFMA, and both tiles go global → shared by cp.async, STAGES − 1
// steps ahead. The registry's launches run:
//
//  * A arrives as Aᵀ (N rows of pitch(M) floats), written by the host's
//    pre-pass (cuda/transposed.py), so a thread's 8 values of A for one
//    reduction index are two float4 of one row (rows 4r + {0..3, 32..35}),
//    and the next index's fragments are loaded while this one's FMAs run.
//  * B read as it lies (Bs[n][k]), or from the host's copy in rows of pitch(K)
//    floats (PAD_B) where K % 4 != 0: four float4 at columns 16 apart; the
//    four lanes of a row group read 64 contiguous bytes.
//  * One barrier per step: the stage refilled at step t was last read at t − 1.
//
// VEC 1 (4-byte copies of B as it lies) runs in `default` only, where C has
// at most 128 rows (policy.twins.scalar_twin). A as it lies (A_T 0), which lost, is
// experiments/bigtile-arms/arms.patch. Two pieces of code no launch runs stay,
// marked "unrun": without them ptxas names registers otherwise in 6 of the
// shipped builds, and the tune record's cubin digests would no longer match.
//
// A warp owns a 64×64 block of C (lanes 8 down × 4 across); the block has
// WARPS_M × WARPS_N warps. Knobs: WARPS_M, WARPS_N, BK, STAGES, MIN_BLOCKS,
// FETCH_BA (the order of one index's fragment loads), PAD_B, SPLIT (split-K:
// the `splitk` rung, bigtile_splitk.md), TMA_COPY (both tiles by TMA: the
// `tma` rung, bigtile_tma.md). A_T 1 and J_OUTER 2 name the one layout of A
// and the one FMA order that ship (the launches' labels and records keep them).
// With SPLIT 0, FETCH_BA 0 and TMA_COPY 0 the source compiles to the same cubins as before
// they existed: ptxas's register allocation, and with it the
// speed, moves with any change to the loop's code.
#include "common.cuh"
#ifndef TMA_COPY
#define TMA_COPY 0  // 1 (sm_90a): both tiles by TMA on an mbarrier per stage, no cp.async
#endif
#if TMA_COPY
#include "hopper.cuh"
// The tiles by descriptor: Aᵀ (N rows of M, pitch(M)) and B (N rows of K, or its padded copy).
#define BIGTILE_ARGS const __grid_constant__ TmaDesc tma_at, const __grid_constant__ TmaDesc tma_b, \
                     float* __restrict__ C, int M, int N, int K
#else
#define BIGTILE_ARGS GEMM_ARGS
#endif

// The knobs come from the launch (launches.bigtile_launch), every one of them: no default here
// could be the one a record timed. PAD_B 1: B arrives in rows of pitch(K) floats (the host's
// padded copy), for any K.
#if !defined(WARPS_M) || !defined(WARPS_N) || !defined(BK) || !defined(STAGES) || !defined(MIN_BLOCKS) || \
    !defined(VEC) || !defined(PAD_B) || !defined(A_T) || !defined(J_OUTER)
#error "bigtile: its knobs are the launch's (gemmlab.launches.bigtile_launch)"
#endif
static_assert(A_T == 1 && J_OUTER == 2, "bigtile ships Aᵀ and one FMA order: experiments/bigtile-arms");
// B's row length in floats: K, or K rounded up to a multiple of 4 in the padded copy.
#define LDB(K) (PAD_B ? ((K) + 3) / 4 * 4 : (K))
#define BM (64 * WARPS_M)
#define BN (64 * WARPS_N)
#define THREADS (32 * WARPS_M * WARPS_N)
#define CHUNKS (BK / 4)          // 16-byte chunks per row of the A tile
#define ROWS_PER_LINE (8 / CHUNKS)  // A rows per 128-byte line of shared memory
#define A_STAGE (BM * BK)
#define B_STAGE (BK * BN)
// Knob combinations the copy loops cannot serve: every thread copies whole 16-byte
// chunks, at least one of each tile per step (VEC 4).
static_assert(VEC == 1 || (A_STAGE % (4 * THREADS) == 0 && B_STAGE % (4 * THREADS) == 0 &&
                           A_STAGE >= 4 * THREADS && B_STAGE >= 4 * THREADS),
              "BK too small for this many threads: some would copy nothing");

// Unrun (the Copier's A fields): where chunk c of row r of A as it lies went, swizzled.
__device__ __forceinline__ int swz(int r) { return (r / ROWS_PER_LINE) % CHUNKS; }
__device__ __forceinline__ int a_at(int r, int c) { return r * BK + 4 * (c ^ swz(r)); }

// Aᵀ's rows are M floats padded to a multiple of 4: the pre-pass's layout.
#define LDM(M) (((M) + 3) / 4 * 4)
// Step t's A tile from Aᵀ: BK rows of BM floats, 16-byte copies (Aᵀ is ours: aligned).
__device__ __forceinline__ void copy_at(float* As, const float* At, int M, int N, int row0, int t, int tid) {
    const int n0 = t * BK, ld = LDM(M);
#pragma unroll
    for (int l = 0; l < A_STAGE / 4 / THREADS; ++l) {
        const int e = tid + l * THREADS, r = e / (BM / 4), c = (e % (BM / 4)) * 4;
        const bool in = n0 + r < N && row0 + c < ld;
        cp_async16(&As[r * BM + c], in ? &At[(size_t)(n0 + r) * ld + row0 + c] : At, in);
    }
}

#if VEC == 4
#define A_COPIES (A_STAGE / 4 / THREADS)
#define B_COPIES (B_STAGE / 4 / THREADS)
#define A_ROWS_APART (THREADS / CHUNKS)    // rows between a thread's A copies
#define B_ROWS_APART (4 * THREADS / BN)    // rows between a thread's B copies
// This thread's share of every step's B copies (A's are copy_at's), worked out once: where its
// first chunk is at step 0 and where it goes in a stage; later chunks and steps are constant
// strides from there. Unrun: the A fields, from A as it lies (see the top).
struct Copier {
    const float* a;  // A[row0 + ra][4·ca]
    const float* b;  // B[rb][col0 + cb]
    int a_dst, b_dst, ca, rb;
    unsigned a_rows_in;  // bit l: A copy l's row is inside M
    bool b_col_in;
    __device__ Copier(const float* A, const float* B, int M, int N, int K, int row0, int col0, int tid) {
        const int ra = tid / CHUNKS, cb = (tid % (BN / 4)) * 4;
        ca = tid % CHUNKS;
        rb = tid / (BN / 4);
        a = A + (size_t)(row0 + ra) * N + 4 * ca;
        b = B + (size_t)rb * LDB(K) + col0 + cb;
        a_dst = a_at(ra, ca);
        b_dst = rb * BN + cb;
        a_rows_in = 0;
#pragma unroll
        for (int l = 0; l < A_COPIES; ++l) a_rows_in |= unsigned(row0 + ra + l * A_ROWS_APART < M) << l;
        b_col_in = col0 + cb < LDB(K);  // the padded copy's extra columns are zeros
    }
    // Copy reduction step t of B (BK×BN) into one stage; zeros outside.
    __device__ __forceinline__ void step(float* As, float* Bs, const float* A, const float* B, int N,
                                         int K, int t) const {
        const int n0 = t * BK;
#pragma unroll
        for (int l = 0; l < B_COPIES; ++l) {
            const bool in = b_col_in && n0 + rb + l * B_ROWS_APART < N;
            const float* src = b + (size_t)(n0 + l * B_ROWS_APART) * LDB(K);
            cp_async16(&Bs[b_dst + l * B_ROWS_APART * BN], in ? src : B, in);
        }
    }
};
#else
// 4-byte copies: any shape, any alignment; one float per copy.
struct Copier {
    int row0, col0, tid, M;
    __device__ Copier(const float*, const float*, int M_, int, int, int r0, int c0, int t)
        : row0(r0), col0(c0), tid(t), M(M_) {}
    __device__ __forceinline__ void step(float* As, float* Bs, const float* A, const float* B, int N,
                                         int K, int t) const {
        const int n0 = t * BK;
#pragma unroll 4
        for (int i = 0; i < B_STAGE / THREADS; ++i) {
            const int e = tid + i * THREADS, r = e / BN, c = e % BN;
            const bool in = n0 + r < N && col0 + c < K;
            cp_async4(&Bs[r * BN + c], in ? &B[(size_t)(n0 + r) * LDB(K) + col0 + c] : B, in);
        }
    }
};
#endif

// This thread's row i (i < 8) of its warp's 64: two runs of 4 (a float4 of Aᵀ's row), 32
// apart, so a warp reads 8 consecutive float4.
__device__ __forceinline__ int my_row(int lane, int i) { return (lane / 4) * 4 + (i / 4) * 32 + i % 4; }

// C's stores where its rows are not 16-byte aligned (K % 4 != 0: the odd shapes). The 4 lanes
// of a quad hold 4 consecutive float4 of one row; stored as they are, a warp's 4-byte store
// writes 4 floats 16 bytes apart in each of 8 rows (2 or 3 sectors a row). A 4×4 transpose
// within the quad first (two rounds of shfl.xor) gives lane q the columns 4x + q (x < 4) of
// each group of 16, so each store writes 16 contiguous bytes per row (1 or 2 sectors a row):
// about half the sectors (bigtile.md measures what that saves). Compiled only where such rows can occur: unused,
// these functions still moved ptxas's allocation of a launch without PAD_B (NVRTC 13.0), as
// any change to its source may (bigtile.md).
#if PAD_B || VEC != 4
__device__ __forceinline__ void quad_transpose(float (&v)[4], int q) {
    // Round 1 (lanes q, q^1): swap the elements whose bit 0 differs from q's.
    float s0 = q & 1 ? v[0] : v[1], s1 = q & 1 ? v[2] : v[3];
    float r0 = __shfl_xor_sync(0xffffffffu, s0, 1), r1 = __shfl_xor_sync(0xffffffffu, s1, 1);
    if (q & 1) v[0] = r0, v[2] = r1; else v[1] = r0, v[3] = r1;
    // Round 2 (lanes q, q^2): likewise for bit 1. Now v[x] is what lane x held at q.
    s0 = q & 2 ? v[0] : v[2], s1 = q & 2 ? v[1] : v[3];
    r0 = __shfl_xor_sync(0xffffffffu, s0, 2), r1 = __shfl_xor_sync(0xffffffffu, s1, 2);
    if (q & 2) v[0] = r0, v[1] = r1; else v[2] = r0, v[3] = r1;
}
// rows: the warp's first row; cols: the quad's first column (the warp's, in a tile of 64).
__device__ __forceinline__ void store_scalar(const float (&acc)[8][16], float* C, int M, int K, int rows,
                                             int cols, int lane) {
    const int q = lane % 4;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = rows + my_row(lane, i);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            float v[4] = {acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]};
            quad_transpose(v, q);  // every lane takes part: rows outside M are skipped after it
            if (row < M) {
#pragma unroll
                for (int x = 0; x < 4; ++x) {
                    const int col = cols + 16 * j + 4 * x + q;
                    if (col < K) C[(size_t)row * K + col] = v[x];
                }
            }
        }
    }
}
#endif

#ifndef FETCH_BA
// 1: an index's B fragments are loaded before its A fragments. The same loads in
// another order: ptxas then spaces the shared loads among the FMAs (fewer 4-cycle waits
// between back-to-back LDS.128), faster at the large shapes (bigtile.md).
#define FETCH_BA 0
#endif

#ifndef SPLIT
// 1: split-K, part blockIdx.z of gridDim.z (the host's policy: cuda/handoff.py). 2: split-K on a
// line of blocks whose tiles need not all have as many parts (a tail split, handoff.TailPlan): the
// first `lead` tiles in `lead_parts` parts each, the rest in `tail_parts`: what `default` runs
// (policy.twins.tailed); the rungs run 1.
#define SPLIT 0
#endif

#if SPLIT
// Split-K where the tiles do not fill the GPU, or a long reduction: part z of a tile runs
// steps [z·S/P, (z+1)·S/P) of its reduction (P = gridDim.z, the host's policy), and the parts
// meet in splitk.cuh's tree (pairs: a 64 KB slot per part is a lot to read at once): no part
// waits on another, and the order of the adds is
// fixed, so the result is the same bit for bit from run to run.
#include "splitk.cuh"

#if SPLIT == 2
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    bigtile(BIGTILE_ARGS, float* __restrict__ work, unsigned* __restrict__ counters, int lead, int lead_parts,
            int tail_parts) {
#else
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    bigtile(BIGTILE_ARGS, float* __restrict__ work, unsigned* __restrict__ counters) {
#endif
#else
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS) bigtile(BIGTILE_ARGS) {
#endif
    extern __shared__ __align__(16) float smem[];
    float* As = smem;                     // STAGES × BK×BM (Aᵀ's rows)
    float* Bs = smem + STAGES * A_STAGE;  // STAGES × BK×BN
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
#if SPLIT == 2
    // The line: the lead tiles' blocks, then the tail's. Within each, part by part, and the tiles
    // of a part in the order SPLIT 1's grid launches them (along C's rows, then down): a grid
    // whose tiles all have P parts runs as SPLIT 1's would, with the same slots. A tile's slots
    // and counters (splitk.cuh): the lead's tile t at t·lead_parts, the tail's after the lead's,
    // or from 0 where the lead's tiles are whole and use none (handoff.TailPlan.slot_count).
    const int across = (K + BN - 1) / BN, tiles = across * ((M + BM - 1) / BM);
    const int lead_blocks = lead * lead_parts;
    const bool in_lead = (int)blockIdx.x < lead_blocks;
    const int parts = in_lead ? lead_parts : tail_parts, count = in_lead ? lead : tiles - lead;
    const int place = in_lead ? blockIdx.x : blockIdx.x - lead_blocks;  // among its own kind
    const int part = place / count, nth = place % count;              // nth tile of its kind
    const int tile = (in_lead ? 0 : lead) + nth;
    const int slot0 = (in_lead || lead_parts == 1 ? 0 : lead_blocks) + nth * parts;
    const int row0 = tile / across * BM, col0 = tile % across * BN;
#define PART part
#define PARTS parts
#define SLOT0 slot0
#else
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
#define PART blockIdx.z
#define PARTS gridDim.z
#define SLOT0 (blockIdx.y * gridDim.x + blockIdx.x) * gridDim.z
#endif
    // This thread's rows: wr + my_row(lane, i) (i < 8); its columns: wc + 16j + (0..3) (j < 4).
    const int wr = (warp / WARPS_N) * 64;
    const int wc = (warp % WARPS_N) * 64 + (lane % 4) * 4;
#if SPLIT
    // This part's steps: [first, steps) of the tile's ceil(N / BK).
    const int all = (N + BK - 1) / BK, first = all * PART / PARTS;
    const int steps = all * (PART + 1) / PARTS;
#define FIRST_STEP first
#else
    const int steps = (N + BK - 1) / BK;
#define FIRST_STEP 0
#endif
#if !TMA_COPY
    const Copier copier(A, B, M, N, K, row0, col0, tid);
#endif
    float acc[8][16];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 16; ++j) acc[i][j] = 0.0f;

#if TMA_COPY
    // Stage w's barrier completes when step t's two boxes (out-of-bounds parts as zeros) have
    // landed; thread 0 issues them. Stage w is refilled only after the block's barrier of the
    // step that last read it, as with cp.async.
    // TMA writes each box at a 128-byte boundary: the stages start on one (the host asks for
    // 128 bytes of slack), the barriers after them.
    As = reinterpret_cast<float*>((reinterpret_cast<size_t>(smem) + 127) / 128 * 128);
    Bs = As + STAGES * A_STAGE;
    uint64_t* full = reinterpret_cast<uint64_t*>(Bs + STAGES * B_STAGE);
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
        mbar_init_fence();
    }
    __syncthreads();
    auto issue = [&](int w, int t) {
        mbar_arrive_expect(&full[w], (A_STAGE + B_STAGE) * 4);
        tma_load_2d(As + w * A_STAGE, &tma_at, &full[w], row0, t * BK);
        tma_load_2d(Bs + w * B_STAGE, &tma_b, &full[w], col0, t * BK);
    };
    if (tid == 0)
        for (int s = 0; s < STAGES - 1; ++s)
            if (FIRST_STEP + s < steps) issue(s, FIRST_STEP + s);
    int read = 0, write = STAGES - 1;
    unsigned phase = 0;  // of stage `read`'s barrier: flips each time `read` wraps
    for (int t = FIRST_STEP; t < steps; ++t) {
        mbar_wait(&full[read], phase);  // step t's tiles have landed ...
        __syncthreads();                // ... and every thread is done with step t − 1's stage
        if (tid == 0 && t + STAGES - 1 < steps) issue(write, t + STAGES - 1);
#else
#if SPLIT
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (first + s < steps) {
            copier.step(As + s * A_STAGE, Bs + s * B_STAGE, A, B, N, K, first + s);
            copy_at(As + s * A_STAGE, A, M, N, row0, first + s, tid);
        }
        cp_async_commit();
    }
#else
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < steps) {
            copier.step(As + s * A_STAGE, Bs + s * B_STAGE, A, B, N, K, s);
            copy_at(As + s * A_STAGE, A, M, N, row0, s, tid);
        }
        cp_async_commit();
    }
#endif
    int read = 0, write = STAGES - 1;  // the stages step t reads and step t + STAGES − 1 fills
    for (int t = FIRST_STEP; t < steps; ++t) {
        cp_async_wait<STAGES - 2>();  // step t's group has landed (for this thread) ...
        __syncthreads();              // ... and for every thread; step t − 1's stage is free
        if (t + STAGES - 1 < steps) {
            copier.step(As + write * A_STAGE, Bs + write * B_STAGE, A, B, N, K, t + STAGES - 1);
            copy_at(As + write * A_STAGE, A, M, N, row0, t + STAGES - 1, tid);
        }
        cp_async_commit();  // an empty group near the end keeps the wait count right
#endif
        const float* bs = Bs + read * B_STAGE + wc;
        // Both tiles in rows of one reduction index: per index 2 + 4 LDS.128, and the
        // next index's fragments are loaded while this one's 128 FMAs run.
        const float* as = As + read * A_STAGE + wr + (lane / 4) * 4;
        float a[2][8], b[2][16];
        // B's loads are written out twice, not shared through a helper lambda: with one, NVRTC 13.0
        // built default's BK 8 launch at 224 registers instead of 241, the slower of its two builds.
        auto fetch = [&](int buf, int k) {
#if FETCH_BA
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float4 v = *reinterpret_cast<const float4*>(&bs[k * BN + 16 * j]);
                b[buf][4 * j] = v.x, b[buf][4 * j + 1] = v.y, b[buf][4 * j + 2] = v.z, b[buf][4 * j + 3] = v.w;
            }
#endif
            const float4 x0 = *reinterpret_cast<const float4*>(&as[k * BM]);
            const float4 x1 = *reinterpret_cast<const float4*>(&as[k * BM + 32]);
            a[buf][0] = x0.x, a[buf][1] = x0.y, a[buf][2] = x0.z, a[buf][3] = x0.w;
            a[buf][4] = x1.x, a[buf][5] = x1.y, a[buf][6] = x1.z, a[buf][7] = x1.w;
#if !FETCH_BA
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float4 v = *reinterpret_cast<const float4*>(&bs[k * BN + 16 * j]);
                b[buf][4 * j] = v.x, b[buf][4 * j + 1] = v.y, b[buf][4 * j + 2] = v.z, b[buf][4 * j + 3] = v.w;
            }
#endif
        };
        fetch(0, 0);
#pragma unroll BK
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) fetch((k + 1) % 2, k + 1);
            // Unrun: the orders but 2 (J_OUTER is 2 in every launch; see the top).
            if (J_OUTER == 1) {
#pragma unroll
                for (int j = 0; j < 16; ++j)
#pragma unroll
                    for (int i = 0; i < 8; ++i) acc[i][j] = fmaf(a[k % 2][i], b[k % 2][j], acc[i][j]);
            } else if (J_OUTER == 2) {  // column by column, down then up: each turn reuses a[i]
#pragma unroll
                for (int j = 0; j < 16; ++j)
#pragma unroll
                    for (int x = 0; x < 8; ++x) {
                        const int i = j % 2 ? 7 - x : x;
                        acc[i][j] = fmaf(a[k % 2][i], b[k % 2][j], acc[i][j]);
                    }
            } else if (J_OUTER == 3) {  // by float4 of columns: 4 FMAs in a row share a[i]
#pragma unroll
                for (int g = 0; g < 4; ++g)
#pragma unroll
                    for (int i = 0; i < 8; ++i)
#pragma unroll
                        for (int jj = 0; jj < 4; ++jj)
                            acc[i][4 * g + jj] = fmaf(a[k % 2][i], b[k % 2][4 * g + jj], acc[i][4 * g + jj]);
            } else {
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 16; ++j) acc[i][j] = fmaf(a[k % 2][i], b[k % 2][j], acc[i][j]);
            }
        }
        read = read + 1 == STAGES ? 0 : read + 1;
        write = write + 1 == STAGES ? 0 : write + 1;
#if TMA_COPY
        phase ^= read == 0;
#endif
    }
    cp_async_wait<0>();  // nothing may still be writing shared memory when the block exits
#if SPLIT
    if (PARTS > 1 && !splitk::combine_from<128, THREADS, 2>(reinterpret_cast<float(&)[128]>(acc), work, counters,
                                                           SLOT0, PART, PARTS))
        return;  // another part of this tile goes on with its sum
#endif

    // float4 stores where C's rows allow them (the 16-byte path without PAD_B guarantees it).
#if PAD_B || VEC != 4
    const bool vec_c = K % 4 == 0 && reinterpret_cast<size_t>(C) % 16 == 0;
    // Rows that are not 16-byte aligned: stores after a quad transpose (store_scalar), kept
    // out of the launches without PAD_B: even a branch that folds away moved ptxas's register
    // allocation of those (NVRTC 13.0).
    if (!vec_c) {
        store_scalar(acc, C, M, K, row0 + wr, col0 + wc - 4 * (lane % 4), lane);
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + wr + my_row(lane, i);
        if (row >= M) continue;
        float* out = &C[(size_t)row * K];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int col = col0 + wc + 16 * j;
            if (col < K)  // K % 4 == 0: all four are in
                *reinterpret_cast<float4*>(&out[col]) = make_float4(
                    acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]);
        }
    }
}
