// One step's tiles of A (BM×BK, As[m][k]) and B (BK×BN, Bs[k][n]) into a stage of shared memory
// by cp.async, for the kernels that read A and B where they lie and split the reduction over
// blocks (small.cu, mma_split.cu). A template, not macros: `gemmlab export` puts headers
// once above every kernel's variant, so nothing here may read a kernel's macros.
//
// `TileCopy<BM, BN, BK, VEC_A, VEC_B, THREADS, LDA, LDB> copy(A, B, M, N, K, row0, col0)`
// is made once a block (the template's parameters are k-named: the kernels' macros take the plain
// names); `copy(As, Bs, t)` issues step t's copies. VEC_A and VEC_B are the floats a copy of A's
// tile and of B's moves: 4 (16 bytes) or 2 (8) where the host has checked that the operand's rows
// start on that many bytes (N, for A, or K, for B, a multiple of it, the pointer aligned), 1 (4
// bytes) for any shape and alignment (`small` also ships twins of wider copies for each operand:
// launches.width_twins). Outside A and B a
// copy reads nothing and writes zeros (source size 0), so the edge tiles need no other test.
//
// A thread's pieces of one tile share a column and lie a fixed number of rows apart (THREADS·VEC_A
// is a multiple of BK, THREADS·VEC_B of BN), so the block works them out once: per tile one offset,
// the rows left inside the matrix and whether the column is inside; a step adds n0 (A) or n0·K
// (B) to the offset and compares once a piece, where deriving every address afresh each step made
// the copies most of the main loop's instructions (experiments/README.md#small-hoist; that arm
// is its patch). Offsets are 32-bit: M·N and N·K are below 2³¹.
#pragma once

// A cp.async of kFloats floats (4, 8 or 16 bytes; sm_80+); with inside false nothing is read and
// the bytes are zeroed.
template <int kFloats>
__device__ __forceinline__ void cp_async_floats(void* dst, const float* src, bool inside) {
    static_assert(kFloats == 1 || kFloats == 2 || kFloats == 4, "cp.async moves 4, 8 or 16 bytes");
    if constexpr (kFloats == 4) {
        cp_async16(dst, src, inside);
    } else if constexpr (kFloats == 1) {
        cp_async4(dst, src, inside);
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_u32(dst)), "l"(src),
                     "r"(inside ? 8 : 0)
                     : "memory");
    }
}

// kHoisted has one value: the parameter the afresh arm was chosen by stays so that the instances keep
// their symbols' names, and the cubins the bytes the tune records' digests cover (experiments/README.md#tools).
template <int kBM, int kBN, int kBK, int kVecA, int kVecB, int kThreads, int kLda, int kLdb, bool kHoisted = true>
struct TileCopy {
    static_assert(kHoisted, "the copies' addresses are worked out once a block (experiments/README.md#small-hoist)");
    static constexpr int kACopies = kBM * kBK / kVecA / kThreads;  // pieces a thread copies a step
    static constexpr int kBCopies = kBK * kBN / kVecB / kThreads;
    static constexpr int kARowsApart = kThreads * kVecA / kBK;     // rows from one piece to the next
    static constexpr int kBRowsApart = kThreads * kVecB / kBN;
    static_assert(kACopies >= 1 && kBCopies >= 1 && (kBM * kBK) % (kVecA * kThreads) == 0 &&
                      (kBK * kBN) % (kVecB * kThreads) == 0 && kBK % kVecA == 0 && kBN % kVecB == 0,
                  "each thread copies whole pieces, each within one row of its tile");
    static_assert((kThreads * kVecA) % kBK == 0 && (kThreads * kVecB) % kBN == 0,
                  "a thread's pieces of a tile share one column");

    const float* A;
    const float* B;
    int M, N, K, row0, col0;
    // This thread's pieces, worked out once.
    int a_off, a_rows;  // A: (row0 + r)·N + c of piece 0 at step 0; rows left below M from it
    int a_col;          // A: the pieces' column within the step
    int b_off, b_row;   // B: r·K + col0 + c of piece 0 at step 0; its row within the step
    bool b_in;          // B: the pieces' column is inside K

    __device__ __forceinline__ TileCopy(const float* A_, const float* B_, int M_, int N_, int K_, int row0_,
                                        int col0_)
        : A(A_), B(B_), M(M_), N(N_), K(K_), row0(row0_), col0(col0_) {
        const int ea = threadIdx.x * kVecA, eb = threadIdx.x * kVecB;
        a_col = ea % kBK;
        a_off = (row0 + ea / kBK) * N + a_col;
        a_rows = M - row0 - ea / kBK;
        b_row = eb / kBN;
        b_off = b_row * K + col0 + eb % kBN;
        b_in = col0 + eb % kBN < K;
    }

    __device__ __forceinline__ void operator()(float* As, float* Bs, int t) const { hoisted(As, Bs, t); }

    // Step t's tiles from the pieces: one add for the step, one compare a piece.
    __device__ __forceinline__ void hoisted(float* As, float* Bs, int t) const {
        const int n0 = t * kBK;
        const bool col_in = n0 + a_col < N;  // N a multiple of VEC_A: a piece is all in or out
        const int a0 = a_off + n0;
        const int dst_a = (threadIdx.x * kVecA / kBK) * kLda + a_col;
#pragma unroll
        for (int l = 0; l < kACopies; ++l) {
            const bool in = col_in && l * kARowsApart < a_rows;
            const float* src = in ? A + a0 + l * kARowsApart * N : A;
            cp_async_floats<kVecA>(&As[dst_a + l * kARowsApart * kLda], src, in);
        }
        const int rows_left = N - n0 - b_row;  // rows of this step's B tile from piece 0's down
        const int b0 = b_off + n0 * K;
        const int dst_b = b_row * kLdb + (threadIdx.x * kVecB) % kBN;
#pragma unroll
        for (int l = 0; l < kBCopies; ++l) {
            const bool in = b_in && l * kBRowsApart < rows_left;
            const float* src = in ? B + b0 + l * kBRowsApart * K : B;
            cp_async_floats<kVecB>(&Bs[dst_b + l * kBRowsApart * kLdb], src, in);
        }
    }
};
