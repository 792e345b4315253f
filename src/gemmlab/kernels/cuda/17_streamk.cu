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

extern "C" __global__ void KERNEL_BOUNDS
    streamk(GEMM_ARGS, float* __restrict__ work, unsigned* __restrict__ flags) {
    extern __shared__ __align__(16) float smem[];
    const int tiles_n = (K + BN - 1) / BN, tiles = (M + BM - 1) / BM * tiles_n;
    const int steps = (N + BK - 1) / BK, grid = gridDim.x, me = blockIdx.x;
    float acc[8][16];
    // Steps [t0, t1) of a tile into acc; after it, shared memory may be refilled.
    auto run = [&](int tile, int t0, int t1) {
        product_steps(acc, smem, A, B, M, N, K, tile / tiles_n * BM, tile % tiles_n * BN, t0, t1);
        __syncthreads();
    };
    auto store = [&](int tile) { store_tile(acc, C, M, K, tile / tiles_n * BM, tile % tiles_n * BN); };

    if (tiles >= grid) {
        const int waves = tiles / grid;
        const int shared = tiles % grid ? tiles - (waves - 1) * grid : 0;  // G ≤ shared < 2G
        if (shared) {
            const long long line = (long long)shared * steps;
            const long long r0 = line * me / grid, r1 = line * (me + 1) / grid;  // ≥ steps apart
            if (r1 % steps) {  // the head of tile r1 / steps, first: the next block waits for it
                zero(acc);
                run(int(r1 / steps), 0, int(r1 % steps));
                save(acc, work, me);
                raise_flag(&flags[me]);
            }
            for (int tile = int((r0 + steps - 1) / steps); tile < int(r1 / steps); ++tile) {
                zero(acc);
                run(tile, 0, steps);
                store(tile);
            }
            if (r0 % steps) {  // the tail of tile r0 / steps, last: its head is long done
                wait_flag(&flags[me - 1]);
                take<false>(acc, work, me - 1);
                run(int(r0 / steps), int(r0 % steps), steps);
                store(int(r0 / steps));
            }
        }
        for (int tile = shared + me; tile < tiles; tile += grid) {
            zero(acc);
            run(tile, 0, steps);
            store(tile);
        }
        return;
    }

    int split = grid / tiles;
    if (split > steps / SPLIT_MIN_STEPS) split = steps / SPLIT_MIN_STEPS;
    if (split < 1 || N > SPLIT_MAX_N) split = 1;
    if (me >= tiles * split) return;
    const int tile = me / split, part = me % split;  // the last part (highest index) sums
    zero(acc);
    run(tile, steps * part / split, steps * (part + 1) / split);
    if (part + 1 < split) {
        save(acc, work, me);
        raise_flag(&flags[me]);
        return;
    }
    for (int p = me - part; p < me; ++p) {
        wait_flag(&flags[p]);
        take<true>(acc, work, p);
    }
    store(tile);
}
