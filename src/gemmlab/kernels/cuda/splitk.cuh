// Split-K hand-off: the P parts of one tile's reduction combined in a fixed tree of fan-in F,
// with no block ever waiting on another.
//
// Part p of a tile sums reduction steps [p·S/P, (p+1)·S/P) into its registers. Then the parts
// meet in a tree over p: at each level the children of a node (up to F of them) each write
// their sums to their own slot of scratch and arrive at the node's counter; the one that
// arrives last adds the children's sums, reading every slot in child order (its own too), so
// the adds come in the same order whichever child finishes last and the result is the same
// bit for bit on every call; it resets the counter for the next call and goes on up, and the
// others leave. The block that finishes the root stores the tile. No block spins on another,
// so the grid may be larger than the GPU holds at once (the parts need not be co-resident).
// Summing in parts and then in a tree is also closer to the exact product than one long chain.
//
// Scratch: P slots per tile of kThreads·kAcc floats (slot s of tile t at work[(t·P + s)·kThreads·
// kAcc]), float4 e of thread i at [e][i] so that a warp's loads and stores are coalesced. A node's
// slot is its leftmost leaf's, and its counter its second child's leftmost leaf's: both unique
// per tile, and no slot is written before its last reader has read it. Counters start at zero
// (the host zeroes them once) and are zero again after every call.
#pragma once

namespace splitk {

// Part blockIdx.z's share [first, last) of a reduction of N, in whole steps of `step` elements
// (`thin`, `gemv`: kernels that walk N by elements, not by tiles of a pipeline).
__device__ __forceinline__ void part_range(int N, int step, int& first, int& last) {
    const int steps = (N + step - 1) / step;
    first = steps * blockIdx.z / gridDim.z * step;
    last = min(N, steps * (blockIdx.z + 1) / gridDim.z * step);
}

[[maybe_unused]] constexpr int kBatch = 8;  // float4 loads of a slot in flight at once, per thread

// Who combines: the whole block (kBar 0: every thread calls combine, and the block's barrier is
// theirs), or a team of kThreads threads from thread kFirst on that meets at named barrier kBar
// (a warp-specialised kernel's consumers, whose producer warpgroup has left: wgmma_swap.cu).
// The defaults are the whole block's code as it was before teams.

// L2 only (.cg): the reader runs on another SM, and L1 is not coherent between SMs.
// kThreads: the threads whose sums a slot holds, the block's (or team's) first kThreads. kFew:
// fewer than the block's (`thin`, whose sums sit in a warp or a thread a warp): the others skip the slot.
template <int kAcc, int kThreads, bool kFew = false, int kFirst = 0>
__device__ __forceinline__ void put(const float (&acc)[kAcc], float* slot) {
    if constexpr (kFew) {
        if (threadIdx.x - kFirst >= kThreads) return;
    }
    float4* p = reinterpret_cast<float4*>(slot) + (threadIdx.x - kFirst);
#pragma unroll
    for (int e = 0; e < kAcc / 4; ++e)
        __stcg(p + e * kThreads, make_float4(acc[4 * e], acc[4 * e + 1], acc[4 * e + 2], acc[4 * e + 3]));
}

// acc = slot (first) or acc += slot (the others), child by child.
template <int kAcc, int kThreads, bool kFew = false, int kFirst = 0>
__device__ __forceinline__ void take(float (&acc)[kAcc], const float* slot, bool first) {
    if constexpr (kFew) {
        if (threadIdx.x - kFirst >= kThreads) return;
    }
    const float4* p = reinterpret_cast<const float4*>(slot) + (threadIdx.x - kFirst);
#pragma unroll
    for (int e = 0; e < kAcc / 4; ++e) {
        const float4 v = __ldcg(p + e * kThreads);
        if (first) {
            acc[4 * e] = v.x, acc[4 * e + 1] = v.y, acc[4 * e + 2] = v.z, acc[4 * e + 3] = v.w;
        } else {
            acc[4 * e] += v.x, acc[4 * e + 1] += v.y, acc[4 * e + 2] += v.z, acc[4 * e + 3] += v.w;
        }
        // At most kBatch float4 in flight: left alone, ptxas hoists all the loads above the adds
        // and needs a register for every float beside the accumulators (spills in bigtile).
        if (e % kBatch == kBatch - 1) asm volatile("" ::: "memory");
    }
}

// Arrive at a node's counter, one of `children`; true for the last arrival (who then owns the
// node's sum). The answer reaches every thread through the barrier's own OR, not shared memory:
// the kernels' shared memory stays exactly their tiles.
// kBar, kCount, kFirst: a team's named barrier, its threads and its first (kBar 0: the block's).
template <int kBar = 0, int kCount = 0, int kFirst = 0>
__device__ __forceinline__ bool last_to_arrive(unsigned* counter, int children) {
    __threadfence();  // this thread's sums are visible to the GPU before the arrival is
    if constexpr (kBar == 0) {
        __syncthreads();
    } else {
        asm volatile("bar.sync %0, %1;" ::"n"(kBar), "n"(kCount) : "memory");
    }
    bool last = false;
    if (threadIdx.x == kFirst) {
        unsigned old;
        asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
        last = old == (unsigned)children - 1;
        if (last) *counter = 0;  // all have arrived: zero again for the next call
    }
    if constexpr (kBar == 0) {
        return __syncthreads_or(last);
    } else {
        unsigned any;
        asm volatile("{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n"
                     " selp.u32 %0, 1, 0, q;\n}" : "=r"(any) : "r"((unsigned)last), "n"(kBar), "n"(kCount) : "memory");
        return any != 0;
    }
}

// Combine part `part` of `parts` of a tile whose slots and counters start at `first`, in a tree of
// fan-in kFan; true where this block holds the tile's whole sum and stores it, false where another
// block goes on with it (this one should return). Every thread of the block calls it (the arrivals
// are block-wide); with kFew only the first kThreads move sums. With kBar, a team: its kThreads
// threads from kFirst on call it, and meet at named barrier kBar. `first` is the tile's own: tiles
// of one grid may have different numbers of parts (bigtile's SPLIT 2, a tail split).
template <int kAcc, int kThreads, int kFan, bool kFew = false, int kBar = 0, int kFirst = 0>
__device__ __forceinline__ bool combine_from(float (&acc)[kAcc], float* work, unsigned* counters, int first,
                                             int part, int parts) {
    static_assert(kBar == 0 || (!kFew && kBar < 16 && kThreads % 32 == 0 && kFirst % 32 == 0),
                  "a team is whole warps that all hold sums, at a named barrier 1-15");
    // Only `part`, `parts`, `span` and `count` stay live: bigtile's epilogue runs at its register limit.
    for (int span = 1, count = parts; count > 1; span *= kFan, count = (count + kFan - 1) / kFan) {
        const int node = part / span, lo = node / kFan * kFan;  // this node, and its first sibling
        const int children = min(kFan, count - lo);
        if (children == 1) continue;  // a node alone at the right end goes up as it is
        put<kAcc, kThreads, kFew, kFirst>(acc, work + (size_t)(first + node * span) * kThreads * kAcc);
        if (!last_to_arrive<kBar, kThreads, kFirst>(&counters[first + (lo + 1) * span], children)) return false;
        __threadfence();  // the other children's sums, written before their arrivals, are read after
        if (kFan == 2) {
            // A pair: own sums + the sibling's, the same bits either way round (IEEE addition is
            // commutative), and one slot read instead of two (bigtile's 64 KB slots).
            take<kAcc, kThreads, kFew, kFirst>(acc, work + (size_t)(first + (node ^ 1) * span) * kThreads * kAcc,
                                               false);
        } else {
            for (int c = 0; c < children; ++c)
                take<kAcc, kThreads, kFew, kFirst>(acc, work + (size_t)(first + (lo + c) * span) * kThreads * kAcc,
                                                   c == 0);
        }
    }
    return true;
}

// combine_from for a grid whose tiles all have `parts` parts: tile `tile`'s slots start at tile·parts.
template <int kAcc, int kThreads, int kFan, bool kFew = false, int kBar = 0, int kFirst = 0>
__device__ __forceinline__ bool combine(float (&acc)[kAcc], float* work, unsigned* counters, int tile, int part,
                                        int parts) {
    return combine_from<kAcc, kThreads, kFan, kFew, kBar, kFirst>(acc, work, counters, tile * parts, part, parts);
}

}  // namespace splitk
