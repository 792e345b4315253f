// Bᵀ made in the block: no pre-pass. The producer warpgroup transposes and
// rounds each B stage in shared memory, in place, while the consumers multiply.
//
// TF32 wgmma reads its shared-memory operand with the reduction index
// contiguous, and B (N×K, row-major) has it on rows. Rung 18 writes Bᵀ in a
// pre-pass (a read and a write of B in global memory while the tensor cores
// wait). Here TMA copies B as it lies into the stage (BK rows of B × 256
// columns, as 8 boxes of 32 columns in the 128-byte swizzle), and the four
// producer warps, idle in rung 18 but one thread, turn it into Bᵀ in the same
// 32 KB (256 rows of 32 floats, 128-byte swizzle, as rung 18's TMA wrote it),
// rounding each value to TF32 on the way. Box x (columns 32x.. of raw B)
// becomes rows 32x.. of Bᵀ: the same 4 KB, so a warp reads a box into
// registers and writes it back transposed, with no other warp to wait for;
// warp w does boxes 2w and 2w + 1. The consumers are rung 18's.
//
// Hand-offs per step j, stage s = j % STAGES: `loaded[s]` (TMA's bytes of A and
// raw B landed), `full[s]` (the four producer warps wrote Bᵀ) and `empty[s]`
// (both consumers done). Warp 0 also issues the copies: each as soon as its
// stage is free, polling between transposes, so that copies run STAGES − 1
// steps ahead as in rung 18 while the warp keeps transposing.
//
// Registers: the producers keep PRODUCER_REGS (a box is 32 floats a thread) and the consumers claim CONSUMER_REGS. ptxas allocates each role
// within its setmaxnreg figure: without the claim, the consumers' 128
// accumulators and 16 fragment registers do not fit in the 168 of the kernel's
// entry, and wgmmas get serialised around spills. The claims must fit in what
// the block was launched with (3 × 128 threads × 168): a claim beyond it waits
// forever.
#include "hopper.cuh"

#ifndef STAGES
#define STAGES 4
#endif
#ifndef GROUP_M
#define GROUP_M 8
#endif
#define BM 128
#define BN 256
#define BK 32
#define BOX 32  // columns of B per raw box: one 128-byte swizzled row per row of B
#define THREADS 384
#define PRODUCER_REGS 88
#define CONSUMER_REGS 208
static_assert(PRODUCER_REGS + 2 * CONSUMER_REGS <= 3 * (65536 / THREADS / 8 * 8),
              "setmaxnreg claims beyond the block's registers never complete");
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)

// This thread's A fragments for one stage, rounded to TF32 (as rung 18).
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

__device__ __forceinline__ float4 tf32x4(float a, float b, float c, float d) {
    return make_float4(__uint_as_float(tf32_bits(a)), __uint_as_float(tf32_bits(b)),
                       __uint_as_float(tf32_bits(c)), __uint_as_float(tf32_bits(d)));
}

// One raw box transposed in place. Box x holds columns 32x.. of raw B (BK rows
// of 128 bytes) and becomes rows 32x.. of Bᵀ (32 rows of 128 bytes): the same
// 4 KB. Its 64 4×4 blocks (rows 4a.. of raw B, columns 4b.., b in 8x..8x + 7)
// become rows 4b.. of Bᵀ, columns 4a... Both sides are swizzled (16-byte chunk
// j of 128-byte row r at chunk j ^ (r % 8)). The eight lanes of a quarter-warp
// take a = e = lane % 8 and b = 8x + (e ^ c), c = quarter + 4i: then their
// 16-byte reads of a raw row, and their writes of a Bᵀ row, land on eight
// different chunks (bank groups), without conflicts. The warp reads the whole
// box before it writes any of it (__syncwarp).
__device__ __forceinline__ void transpose_box(float* stage, int x, int lane) {
    const int e = lane & 7, quarter = lane >> 3;
    float* box = stage + x * (BK * BOX);
    float4 v[2][4];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int b = e ^ (quarter + 4 * i);  // the block's column within the box
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int n = 4 * e + r;
            v[i][r] = *reinterpret_cast<const float4*>(box + n * BOX + ((b ^ (n & 7)) << 2));
        }
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int b = e ^ (quarter + 4 * i);
        const float4* y = v[i];
        const float4 t[4] = {tf32x4(y[0].x, y[1].x, y[2].x, y[3].x), tf32x4(y[0].y, y[1].y, y[2].y, y[3].y),
                             tf32x4(y[0].z, y[1].z, y[2].z, y[3].z), tf32x4(y[0].w, y[1].w, y[2].w, y[3].w)};
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const int k = 4 * b + c;  // row of the box's Bᵀ rows; k % 8 is the row's swizzle
            *reinterpret_cast<float4*>(box + k * BK + ((e ^ (k & 7)) << 2)) = t[c];
        }
    }
}

// Whether the phase of this parity has completed, without waiting.
__device__ __forceinline__ bool mbar_test(uint64_t* bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    return done;
}

// Generic-proxy writes to shared memory, made visible to the async proxy (wgmma).
__device__ __forceinline__ void fence_proxy_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Block b's walk over the tiles, one step (BK of the reduction) at a time.
struct Walk {
    int first, stride, steps, tiles_m, tiles_n;
    __device__ __forceinline__ int total(int tiles) const {
        return first < tiles ? steps * ((tiles - first + stride - 1) / stride) : 0;
    }
    __device__ __forceinline__ void at(int j, int& tm, int& tn, int& t) const {
        tile_coords(first + (j / steps) * stride, tiles_m, tiles_n, GROUP_M, tm, tn);
        t = j % steps;
    }
};

struct Consumer {
    float* As;
    float* Bs;
    uint64_t* loaded;
    uint64_t* full;
    uint64_t* empty;
    int half, g, q, warp;
    int s = 0;  // the stage, and the parity of its current phase (counted, not divided out:
    unsigned phase = 0;  // STAGES need not be a power of 2, and registers are tight here)

    __device__ __forceinline__ void step(float (&d)[BN / 2], unsigned (&af)[16]) {
        mbar_wait(&loaded[s], phase);  // A's bytes (complete already: Bᵀ was made after them)
        mbar_wait(&full[s], phase);
        const uint64_t db = desc_k_major_sw128(Bs + s * (B_BYTES / 4));
        load_a(af, As + s * (A_BYTES / 4) + (64 * half + 16 * warp + g) * BK, g, q);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk) wgmma_tf32_ra<BN>(d, &af[4 * kk], db + 2 * kk);
        wgmma_commit();
        wgmma_wait<0>();
        if (threadIdx.x % 128 == 0) mbar_arrive(&empty[s]);
        if (++s == STAGES) s = 0, phase ^= 1;
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_fused(const __grid_constant__ TmaDesc tma_a, const __grid_constant__ TmaDesc tma_b,
                float* __restrict__ C, int M, int N, int K) {
    extern __shared__ unsigned char smem_raw[];
    float* As = reinterpret_cast<float*>(swizzle_aligned(smem_raw));
    float* Bs = As + STAGES * (A_BYTES / 4);
    uint64_t* loaded = reinterpret_cast<uint64_t*>(Bs + STAGES * (B_BYTES / 4));
    uint64_t* full = loaded + STAGES;
    uint64_t* empty = full + STAGES;
    const int tid = threadIdx.x, wg = tid / 128;
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (K + BN - 1) / BN;
    const Walk walk{(int)blockIdx.x, (int)gridDim.x, (N + BK - 1) / BK, tiles_m, tiles_n};

    if (tid == 0) {
        tma_prefetch_desc(&tma_a);
        tma_prefetch_desc(&tma_b);
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&loaded[s], 1);  // thread 0's arrival with the bytes of A and raw B
            mbar_init(&full[s], 4);    // one arrival per producer warp
            mbar_init(&empty[s], 2);   // one arrival per consumer warpgroup
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (wg == 0) {
        regs_release<PRODUCER_REGS>();
        const int total = walk.total(tiles_m * tiles_n), warp = tid / 32, lane = tid % 32;
        int issued = 0;  // warp 0: the next step whose copies are to be issued
        // Warp 0 issues the copies of every step before `until` whose stage is free,
        // waiting for the stage of the first one only if `wait` (it is needed now).
        // The whole warp takes each decision (lane 0's view of the barrier) and lane
        // 0 alone issues: a lone lane issuing while its warp spins in a barrier wait
        // is starved by that wait (4.3 ms at the performance shape, measured).
        auto issue = [&](int until, bool wait) {
            for (; issued < until && issued < total; ++issued, wait = false) {
                const int s = issued % STAGES;
                const unsigned free_parity = ((issued / STAGES) & 1) ^ 1;  // a fresh stage is free
                if (wait) {
                    mbar_wait(&empty[s], free_parity);
                } else if (!__shfl_sync(0xffffffffu, mbar_test(&empty[s], free_parity), 0)) {
                    return;
                }
                if (lane == 0) {
                    int tm, tn, t;
                    walk.at(issued, tm, tn, t);
                    float* b = Bs + s * (B_BYTES / 4);
                    mbar_arrive_expect(&loaded[s], A_BYTES + B_BYTES);
                    tma_load_2d(As + s * (A_BYTES / 4), &tma_a, &loaded[s], t * BK, tm * BM);
#pragma unroll
                    for (int x = 0; x < BN / BOX; ++x)
                        tma_load_2d(b + x * (BK * BOX), &tma_b, &loaded[s], tn * BN + x * BOX, t * BK);
                }
                __syncwarp();
            }
        };
        for (int j = 0; j < total; ++j) {
            const int s = j % STAGES;
            const unsigned parity = (j / STAGES) & 1;
            if (warp == 0) {
                // Wait for this step's copies, issuing later ones as their stages free up:
                // blocking on `loaded` alone would leave a freed stage unfilled meanwhile.
                do issue(j + STAGES, issued <= j);
                while (!__shfl_sync(0xffffffffu, mbar_test(&loaded[s], parity), 0));
            } else {
                mbar_wait(&loaded[s], parity);
            }
            // Warp w: boxes 2w and 2w + 1 (columns 64w.. of raw B, rows 64w.. of Bᵀ).
            transpose_box(Bs + s * (B_BYTES / 4), 2 * warp, lane);
            transpose_box(Bs + s * (B_BYTES / 4), 2 * warp + 1, lane);
            fence_proxy_async_smem();  // our writes of Bᵀ, before wgmma reads them
            __syncwarp();
            if (lane == 0) mbar_arrive(&full[s]);
        }
        return;
    }

    regs_claim<CONSUMER_REGS>();
    const int lane = tid % 32;
    Consumer c{As, Bs, loaded, full, empty, wg - 1, lane / 4, lane % 4, (tid % 128) / 32};
    float d[BN / 2];
    unsigned af[16];
    for (int tile = walk.first; tile < tiles_m * tiles_n; tile += walk.stride) {
        int tm, tn;
        tile_coords(tile, tiles_m, tiles_n, GROUP_M, tm, tn);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
        for (int t = 0; t < walk.steps; ++t) c.step(d, af);
        fence_registers(d);
        store_tile(d, C, M, K, tm * BM + 64 * c.half, tn * BN, tid % 128);
    }
}
