// Split-K hand-off: the P parts of one tile's reduction combined in a fixed pairwise tree,
// with no block ever waiting on another.
//
// Part p of a tile sums reduction steps [p·S/P, (p+1)·S/P) into its registers. Then the parts
// meet in a binary tree over p: at each level the two children of a node each write their sums
// to the node's slot of scratch and arrive at the node's counter; the one that arrives second
// adds the other's sums to its own (left + right, so every run adds in the same order and the
// result is bit-for-bit the same whichever part finishes first), resets the counter for the next
// call, and goes on up; the first one leaves. The block that finishes the root stores the tile.
// No block spins on another, so the grid may be larger than the GPU holds at once (the parts
// need not be co-resident) and a part may run after the others have finished. Summing in pairs
// is also closer to the exact product than one long chain of adds.
//
// Scratch: P slots per tile of THREADS·R floats (slot s of tile t at work[(t·P + s)·THREADS·R]),
// float4 e of thread i at [e][i] so that a warp's loads and stores are coalesced. A node's slot
// is its leftmost leaf's, and its counter its right child's leftmost leaf's: both unique per
// tile, and no slot is written before its last reader has read it. Counters start at zero
// (the host zeroes them once) and are zero again after every call.
#pragma once

namespace splitk {

constexpr int kBatch = 8;  // float4 loads of a slot in flight at once, per thread

// L2 only (.cg): the reader runs on another SM, and L1 is not coherent between SMs.
template <int kAcc, int kThreads>
__device__ __forceinline__ void put(const float (&acc)[kAcc], float* slot) {
    float4* p = reinterpret_cast<float4*>(slot) + threadIdx.x;
#pragma unroll
    for (int e = 0; e < kAcc / 4; ++e)
        __stcg(p + e * kThreads, make_float4(acc[4 * e], acc[4 * e + 1], acc[4 * e + 2], acc[4 * e + 3]));
}

// acc = left + right, where acc holds one child's sums and the slot the other's: IEEE addition
// is commutative, so this is the same sum whichever child got here second.
template <int kAcc, int kThreads>
__device__ __forceinline__ void add(float (&acc)[kAcc], const float* slot) {
    const float4* p = reinterpret_cast<const float4*>(slot) + threadIdx.x;
#pragma unroll
    for (int e = 0; e < kAcc / 4; ++e) {
        const float4 v = __ldcg(p + e * kThreads);
        acc[4 * e] += v.x, acc[4 * e + 1] += v.y, acc[4 * e + 2] += v.z, acc[4 * e + 3] += v.w;
        // At most kBatch float4 in flight: left alone, ptxas hoists all the loads above the adds
        // and needs a register for every float beside the accumulators (spills in bigtile).
        if (e % kBatch == kBatch - 1) asm volatile("" ::: "memory");
    }
}

// Arrive at a node's counter; true for the second arrival (who then owns the node's sum). The
// answer reaches every thread through the barrier's own OR, not shared memory: the kernels'
// shared memory stays exactly their tiles.
__device__ __forceinline__ bool second_to_arrive(unsigned* counter) {
    __threadfence();  // this thread's sums are visible to the GPU before the arrival is
    __syncthreads();
    bool second = false;
    if (threadIdx.x == 0) {
        unsigned old;
        asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
        second = old == 1;
        if (second) *counter = 0;  // both have arrived: zero again for the next call
    }
    return __syncthreads_or(second);
}

// Combine part `part` of `parts` of tile `tile`; true where this block holds the tile's whole
// sum and stores it, false where another block goes on with it (this one should return).
template <int kAcc, int kThreads>
__device__ __forceinline__ bool combine(float (&acc)[kAcc], float* work, unsigned* counters, int tile, int part,
                                        int parts) {
    // Level l: this block holds node part >> l, of ((parts − 1) >> l) + 1 nodes, each the sum of
    // 2^l leaves; only `part`, `parts` and `l` stay live (the epilogue runs at bigtile's register limit).
    const int first = tile * parts;  // this tile's first slot and counter
    for (int l = 0; (parts - 1) >> l; ++l) {
        const int node = part >> l, sibling = node ^ 1;
        if (sibling > (parts - 1) >> l) continue;  // an odd node out at the right end goes up alone
        put<kAcc, kThreads>(acc, work + (size_t)(first + (node << l)) * kThreads * kAcc);
        if (!second_to_arrive(&counters[first + ((node | 1) << l)])) return false;
        __threadfence();  // the other child's sums, written before its arrival, are read after it
        add<kAcc, kThreads>(acc, work + (size_t)(first + (sibling << l)) * kThreads * kAcc);
    }
    return true;
}

}  // namespace splitk
