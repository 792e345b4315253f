// Ordered stream-K: bigtile's product on a resident grid, the last tiles' steps shared out
// evenly, handed from block to block in reduction order.
//
// bigtile runs one block per 128×128 tile, two blocks per SM. At the performance shape
// that is 2,048 tiles on 264 slots: 7.76 waves, so the eighth runs three quarters full
// and about 3 % of the GPU's time is idle (likewise at 4096³ and 8192³: tile counts are
// powers of two, slot counts multiples of 33). Here the grid is exactly the blocks the
// GPU holds (G), and:
//
//  * all but the last one or two waves' worth of tiles run as before, block b taking
//    tiles S + b, S + b + G, … (data-parallel, every block in step);
//  * the S "shared" tiles (G ≤ S < 2G) are one line of S × steps reduction steps, cut
//    into G equal ranges: each block gets the end of one tile (a "tail"), maybe a
//    whole tile, and the start of another (a "head"), so every block has the same
//    work and all finish together.
//
// Strict FP32 is kept bit for bit: a tile cut in two is not summed from two partial
// sums. The block holding its head runs those steps *first*, stores its 128
// accumulators per thread to scratch and raises a flag; the block holding its tail runs
// them *last*, waits for the flag, loads the accumulators and carries on with the next
// reduction step, so each output sees the same FMAs in the same order as in bigtile.
// A block only ever waits for the block before it, on work that block did first: the
// waits are short, and cannot deadlock even if the blocks were not all resident.
//
// Fewer tiles than blocks (T < G): the hand-off cannot add parallelism there (a tile's
// steps are a chain), so where the reduction is short (N ≤ SPLIT_MAX_N) each tile's
// steps are split into `split` contiguous parts run at once, and the part holding the
// last steps adds the others' sums in a fixed order (deterministic; the error bound of
// a blocked sum, no worse than the chain's). Longer reductions keep one block per tile.
//
// Flags live in a zeroed buffer the host keeps per device and stream; each raised flag
// is lowered by the one block that waits on it, so the buffer is zero again after every
// call. Knobs: bigtile's (bigtile.cuh), SPLIT_MAX_N, SPLIT_MIN_STEPS.
#include "bigtile.cuh"

#ifndef SPLIT_MAX_N
#define SPLIT_MAX_N 2048  // longest reduction split into parts (0: never split)
#endif
#ifndef SPLIT_MIN_STEPS
#define SPLIT_MIN_STEPS 16  // fewest reduction steps in one part
#endif
#define SLOT (THREADS * 128)  // floats of one block's accumulators in scratch

// A block's accumulators in scratch slot `slot`: float4 e of thread t at [e][t], so a
// warp's stores and loads are contiguous. L2 only (.cg): the reader runs on another SM.
__device__ __forceinline__ float4* slot_at(float* work, int slot) {
    return reinterpret_cast<float4*>(work + (size_t)slot * SLOT) + threadIdx.x;
}
__device__ __forceinline__ void save(const float (&acc)[8][16], float* work, int slot) {
    float4* p = slot_at(work, slot);
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            __stcg(p + (4 * i + j) * THREADS,
                   make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]));
}
// ADD false: the accumulators become the slot's (a hand-off); true: the slot is added.
template <bool ADD>
__device__ __forceinline__ void take(float (&acc)[8][16], float* work, int slot) {
    const float4* p = slot_at(work, slot);
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float4 v = __ldcg(p + (4 * i + j) * THREADS);
            acc[i][4 * j] = ADD ? acc[i][4 * j] + v.x : v.x;
            acc[i][4 * j + 1] = ADD ? acc[i][4 * j + 1] + v.y : v.y;
            acc[i][4 * j + 2] = ADD ? acc[i][4 * j + 2] + v.z : v.z;
            acc[i][4 * j + 3] = ADD ? acc[i][4 * j + 3] + v.w : v.w;
        }
}

// Every thread's stores are done (the barrier), then one release store of the flag.
__device__ __forceinline__ void raise_flag(unsigned* flag) {
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(1u) : "memory");
    }
}
// One thread spins on an acquire load, lowers the flag for the next call, and the
// barrier passes what it saw on to the block.
__device__ __forceinline__ void wait_flag(unsigned* flag) {
    if (threadIdx.x == 0) {
        unsigned up = 0;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(up) : "l"(flag) : "memory");
        } while (up == 0);
        *flag = 0;
    }
    __syncthreads();
}

// One piece of a block's work: steps [t0, t1) of a tile, where its accumulators start
// (zeros, or a slot handed on) and where they go (C, or a slot for another block).
struct Segment {
    int tile, t0, t1;
    int take_from;  // -1: start from zeros; else the slot (and flag) of the block before
    bool hand_on;   // true: save to this block's slot and raise its flag, instead of storing
    int add_from;   // split-K's last part: slots add_from … me − 1 are added before storing; else −1
};

// This block's segments in the order it runs them; false when there are no more. Written as
// one function called in one loop, so that the kernel holds one copy of the product's code.
__device__ __forceinline__ bool segment(int i, int me, int grid, int tiles, int steps, int N, Segment& s) {
    s.take_from = -1, s.hand_on = false, s.add_from = -1;
    if (tiles < grid) {  // split-K, or one block per tile
        int split = grid / tiles;
        if (split > steps / SPLIT_MIN_STEPS) split = steps / SPLIT_MIN_STEPS;
        if (split < 1 || N > SPLIT_MAX_N) split = 1;
        if (i > 0 || me >= tiles * split) return false;
        const int part = me % split;  // the last part (highest index) sums
        s.tile = me / split, s.t0 = steps * part / split, s.t1 = steps * (part + 1) / split;
        s.hand_on = part + 1 < split;
        if (!s.hand_on && split > 1) s.add_from = me - part;
        return true;
    }
    const int waves = tiles / grid;
    const int shared = tiles % grid ? tiles - (waves - 1) * grid : 0;  // G ≤ shared < 2G
    if (shared) {
        const long long line = (long long)shared * steps;
        const long long r0 = line * me / grid, r1 = line * (me + 1) / grid;  // ≥ steps apart
        const int head = r1 % steps != 0, tail = r0 % steps != 0;
        const int first_whole = int((r0 + steps - 1) / steps), wholes = int(r1 / steps) - first_whole;
        if (i < head) {  // the head of tile r1 / steps, first: the next block waits for it
            s.tile = int(r1 / steps), s.t0 = 0, s.t1 = int(r1 % steps), s.hand_on = true;
            return true;
        }
        i -= head;
        if (i < wholes) {
            s.tile = first_whole + i, s.t0 = 0, s.t1 = steps;
            return true;
        }
        i -= wholes;
        if (i < tail) {  // the tail of tile r0 / steps, last: its head is long done
            s.tile = int(r0 / steps), s.t0 = int(r0 % steps), s.t1 = steps, s.take_from = me - 1;
            return true;
        }
        i -= tail;
    }
    s.tile = shared + me + i * grid, s.t0 = 0, s.t1 = steps;
    return s.tile < tiles;
}

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    streamk(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ flags) {
    extern __shared__ __align__(16) float smem[];
    const int tiles_n = (K + BN - 1) / BN, tiles = (M + BM - 1) / BM * tiles_n;
    const int steps = (N + BK - 1) / BK, grid = gridDim.x, me = blockIdx.x;
    float acc[8][16];
    Segment s;
    for (int i = 0; segment(i, me, grid, tiles, steps, N, s); ++i) {
        const int row0 = s.tile / tiles_n * BM, col0 = s.tile % tiles_n * BN;
        if (s.take_from >= 0) {
            wait_flag(&flags[s.take_from]);
            take<false>(acc, work, s.take_from);
        } else {
            zero(acc);
        }
        product_steps(acc, smem, A, B, M, N, K, row0, col0, s.t0, s.t1);
        __syncthreads();  // the next segment's copies may overwrite any stage
        if (s.hand_on) {
            save(acc, work, me);
            raise_flag(&flags[me]);
            continue;
        }
        for (int p = s.add_from; p >= 0 && p < me; ++p) {
            wait_flag(&flags[p]);
            take<true>(acc, work, p);
        }
        store_tile(acc, C, M, K, row0, col0);
    }
}
