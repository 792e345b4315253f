// Hopper (sm_90a) building blocks in inline PTX: mbarriers, TMA, wgmma.
//
// Written as inline PTX rather than through CUDA's own headers (cuda/barrier,
// cute) so that NVRTC needs no include path and every instruction a rung uses
// is visible in one short file, each with the rule it obeys (HOPPER.md cites
// the PTX ISA sections).
#pragma once
#include "common.cuh"

typedef unsigned long long uint64_t;

// A CUtensorMap as the kernel receives it: 128 opaque bytes, passed by value
// as a `const __grid_constant__` parameter so its address is a valid operand
// of cp.async.bulk.tensor.
struct __align__(64) TmaDesc {
    uint64_t opaque[16];
};

// Dynamic shared memory rounded up to 1024 bytes: the 128-byte swizzle of TMA and
// wgmma repeats every 1024 bytes, so stages must start on that boundary.
__device__ __forceinline__ unsigned char* swizzle_aligned(unsigned char* raw) {
    return raw + ((1024 - (smem_u32(raw) & 1023)) & 1023);
}

// A wgmma rung's dynamic shared memory, laid out as the host sizes it
// (hopper.py's dynamic_smem): from the first 1024-byte boundary, Stages tiles
// of A, then Stages tiles of each of the Planes planes of Bᵀ, then one `full`
// and one `empty` mbarrier per stage.
template <int Stages, int ABytes, int BBytes, int Planes = 1>  // (not the rungs' macro names)
struct StageMemory {
    float* a;
    float* b[Planes];
    uint64_t* full;
    uint64_t* empty;
    __device__ __forceinline__ explicit StageMemory(unsigned char* raw) {
        unsigned char* base = swizzle_aligned(raw);
        a = reinterpret_cast<float*>(base);
#pragma unroll
        for (int p = 0; p < Planes; ++p) b[p] = reinterpret_cast<float*>(base + Stages * (ABytes + p * BBytes));
        full = reinterpret_cast<uint64_t*>(base + Stages * (ABytes + Planes * BBytes));
        empty = full + Stages;
    }
};

// ---- mbarrier: a phase completes when every expected arrival and byte is in.
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(arrivals));
}
// Make the initialisation visible to the async proxy (TMA) and the other threads.
__device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// Arrive once and announce the bytes the copy engine will deliver in this phase.
__device__ __forceinline__ void mbar_arrive_expect(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)),
                 "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// Wait until the phase of this parity has completed. A fresh barrier counts its
// preceding phase (parity 1) as complete: producers start by waiting on parity 1.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(smem_u32(bar)), "r"(parity)
            : "memory");
    } while (!done);
}

// ---- Clusters: CTAs that run together and can reach each other's shared memory.
__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Arrive on the barrier at the same offset in CTA `cta` of this cluster. The
// default semantics (release at CTA scope) suffice: a consumer arrives after
// wgmma.wait_group, so the reads it signals the end of are complete. A cluster-
// scope release made each arriving thread wait on a memory barrier, and its
// warpgroup's next wgmma with it (ncu: "membar" and "warpgroup arrive" stalls).
__device__ __forceinline__ void mbar_arrive_remote(uint64_t* bar, unsigned cta) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(smem_u32(bar)), "r"(cta));
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}
// Every thread of the cluster that has not exited waits here for all the others.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// A stage pipeline made ready by thread 0: per stage a `full` barrier (one arrival, the
// producer's, with the byte count) and an `empty` one (`consumers` arrivals), the init made
// visible to the copy engine; then the block waits, or with clusters the whole cluster: no
// block may arrive on a peer's barriers before they exist.
template <int Stages, int Cluster>
__device__ __forceinline__ void ready_stages(uint64_t* full, uint64_t* empty, unsigned consumers) {
    if (threadIdx.x == 0) {
        for (int s = 0; s < Stages; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], consumers);
        }
        mbar_init_fence();
    }
    if constexpr (Cluster == 1)
        __syncthreads();
    else
        cluster_sync();
}

// ---- TMA: one thread asks the copy engine for a box; completion counts bytes on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const TmaDesc* map, uint64_t* bar, int inner,
                                            int outer) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(inner), "r"(outer)
        : "memory");
}
// The same box written at the same offset into every CTA of `mask` in the
// cluster, each of which counts the bytes on its own barrier at `bar`'s offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TmaDesc* map, uint64_t* bar,
                                                      int inner, int outer, unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(inner), "r"(outer), "h"(mask)
        : "memory");
}
__device__ __forceinline__ void tma_prefetch_desc(const TmaDesc* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- wgmma: a warpgroup (4 warps) multiplies 64×8 of A by 8×N of B into 64×N of D.
// Operands in shared memory are described by a 64-bit descriptor. Both are
// "K-major" (the reduction index contiguous), the only layout TF32 allows, and
// laid out by TMA with the 128-byte swizzle: rows of 32 floats, 8-row groups
// 1024 bytes apart (SBO); the leading offset is unused with a swizzle.
__device__ __forceinline__ uint64_t desc_k_major_sw128(const void* p) {
    const uint64_t addr = smem_u32(p);
    return ((addr & 0x3FFFF) >> 4)          // start address, 16-byte units
           | (uint64_t(1) << 16)            // leading byte offset (unused): 16 B
           | (uint64_t(1024 >> 4) << 32)    // stride byte offset: 8 rows × 128 B
           | (uint64_t(1) << 62);           // layout: 128-byte swizzle
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}
// Registers written by an in-flight wgmma must not be touched before the wait:
// this empty asm ties each one to the instruction stream at this point.
template <int R>
__device__ __forceinline__ void fence_registers(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulator operands of an m64nNk8 wgmma, N/2 registers per thread, in the
// asm's text ("%0, …") and as outputs ("+f"(d[0]), …): written once here for
// N = 128, and for N = 256 as those plus the second 64.
#define WGMMA_D64_TEXT \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WGMMA_D128_TEXT WGMMA_D64_TEXT ", " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define WGMMA_D64_OPS \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define WGMMA_D128_OPS WGMMA_D64_OPS, \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// D += A·B with D in registers (N/2 floats per thread), scale-d = 1.
template <int N>
__device__ __forceinline__ void wgmma_tf32(float (&d)[N / 2], uint64_t a, uint64_t b);

template <>
__device__ __forceinline__ void wgmma_tf32<256>(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" WGMMA_D128_TEXT "}, %128, %129, p, 1, 1;\n}\n"
        : WGMMA_D128_OPS
        : "l"(a), "l"(b));
}

// D += A·B with A from registers: per warp a 16×8 slice, 4 values per thread
// at (g, q), (g + 8, q), (g, q + 4), (g + 8, q + 4), g = lane / 4, q = lane % 4.
// SCALE_D 0 makes it D = A·B: a fresh tile without zeroing its registers first.
template <int N, int SCALE_D = 1>
__device__ __forceinline__ void wgmma_tf32_ra(float (&d)[N / 2], const unsigned* a, uint64_t b) {
    static_assert(N == 128 || N == 256, "m64n128k8 and m64n256k8 only");
    if constexpr (N == 128) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" WGMMA_D64_TEXT "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
            : WGMMA_D64_OPS
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(SCALE_D));
    } else {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" WGMMA_D128_TEXT "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
            : WGMMA_D128_OPS
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(SCALE_D));
    }
}

// ---- Epilogue and tile order shared by the wgmma rungs.

// Store one warpgroup's 64×N accumulators (N = 2R). Register i of a thread holds row
// 16·warp + lane/4 (+8 when bit 1 of i is set), column 8·(i/4) + 2·(lane%4) + i%2.
template <int R>
__device__ __forceinline__ void store_tile(const float (&d)[R], float* C, int M, int K, int row0,
                                           int col0, int thread) {
    const int warp = thread / 32, g = (thread % 32) / 4, q = thread % 4;
    const bool pairs = (K % 2 == 0) && (reinterpret_cast<size_t>(C) % 8 == 0);
#pragma unroll
    for (int i = 0; i < R; i += 2) {
        const int r = row0 + 16 * warp + g + 8 * ((i >> 1) & 1);
        const int c = col0 + 8 * (i >> 2) + 2 * q;
        if (r >= M || c >= K) continue;
        float* dst = &C[(size_t)r * K + c];
        if (pairs) {
            *reinterpret_cast<float2*>(dst) = make_float2(d[i], d[i + 1]);
        } else {
            dst[0] = d[i];
            if (c + 1 < K) dst[1] = d[i + 1];
        }
    }
}

// Tile number → (tile row, tile column), group_m tile rows at a time, so that
// the blocks working at one time share rows of A and columns of B in L2.
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int group_m, int& tm,
                                            int& tn) {
    const int per_group = group_m * tiles_n;
    const int first = (tile / per_group) * group_m;
    const int rows = min(tiles_m - first, group_m);
    tm = first + (tile % per_group) % rows;
    tn = (tile % per_group) / rows;
}

// Warp-specialised kernels move registers from the producer to the consumers.
template <int REGS>
__device__ __forceinline__ void regs_release() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void regs_claim() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
