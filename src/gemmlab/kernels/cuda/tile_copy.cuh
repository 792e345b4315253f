// One step's tiles of A (BM×BK, As[m][k]) and B (BK×BN, Bs[k][n]) into a stage of shared memory
// by cp.async, for the kernels that read A and B where they lie and split the reduction over
// blocks (18_small.cu, 19_mma_split.cu). A template, not macros: `gemmlab export` puts headers
// once above every kernel's variant, so nothing here may read a kernel's macros.
//
// `TileCopy<BM, BN, BK, VEC, THREADS, LDA, LDB, HOIST> copy(A, B, M, N, K, row0, col0)` is made
// once a block (the template's parameters are k-named: the kernels' macros take the plain names);
// `copy(As, Bs, t)` issues step t's copies. VEC 4: 16-byte copies, whose
// preconditions the host checks (N % 4 == 0, K % 4 == 0, A and B 16-byte aligned); VEC 1: 4-byte
// copies, any shape and alignment. Outside A and B a copy reads nothing and writes zeros (source
// size 0), so the edge tiles need no other test. HOIST chooses how a step finds its addresses:
//
// HOIST false (as the rungs ship): each piece's row, column, bounds and 64-bit address from
// scratch at every step. With 4-byte copies that is twelve pieces a thread a step at `small`'s
// 32×64 tiles, and its main loop came to 569 instructions for 256 FFMAs (391 with 16-byte copies;
// sm_90a SASS, 2026-12-04); `mma-split`'s 4-byte loop to 407 for 16 HMMAs.
//
// HOIST true: a thread's pieces of one tile share a column and lie a fixed number of rows apart
// (THREADS·VEC is a multiple of BK and of BN), so the block keeps, per tile, one offset, the rows
// left inside the matrix and whether the column is inside; a step adds n0 (A) or n0·K (B) to the
// offset and compares once a piece. Offsets are 32-bit: M·N and N·K are below 2³¹. The same
// bytes land in the same places, so the products are bit for bit the same
// (experiments/small-hoist).
#pragma once

template <int kBM, int kBN, int kBK, int kVec, int kThreads, int kLda, int kLdb, bool kHoist>
struct TileCopy {
    static constexpr int kACopies = kBM * kBK / kVec / kThreads;  // pieces of VEC floats a thread a step
    static constexpr int kBCopies = kBK * kBN / kVec / kThreads;
    static constexpr int kARowsApart = kThreads * kVec / kBK;     // HOIST: rows from one piece to the next
    static constexpr int kBRowsApart = kThreads * kVec / kBN;
    static_assert(kACopies >= 1 && kBCopies >= 1 && (kBM * kBK) % (kVec * kThreads) == 0 &&
                      (kBK * kBN) % (kVec * kThreads) == 0 && kBK % kVec == 0 && kBN % kVec == 0,
                  "each thread copies whole VEC-wide pieces, each within one row of its tile");
    static_assert(!kHoist || ((kThreads * kVec) % kBK == 0 && (kThreads * kVec) % kBN == 0),
                  "HOIST: a thread's pieces of a tile share one column");

    const float* A;
    const float* B;
    int M, N, K, row0, col0;
    // HOIST: this thread's pieces, worked out once.
    int a_off, a_rows;  // A: (row0 + r)·N + c of piece 0 at step 0; rows left below M from it
    int a_col;          // A: the pieces' column within the step
    int b_off, b_row;   // B: r·K + col0 + c of piece 0 at step 0; its row within the step
    bool b_in;          // B: the pieces' column is inside K

    __device__ __forceinline__ TileCopy(const float* A_, const float* B_, int M_, int N_, int K_, int row0_,
                                        int col0_)
        : A(A_), B(B_), M(M_), N(N_), K(K_), row0(row0_), col0(col0_) {
        if constexpr (kHoist) {
            const int e = threadIdx.x * kVec;
            a_col = e % kBK;
            a_off = (row0 + e / kBK) * N + a_col;
            a_rows = M - row0 - e / kBK;
            b_row = e / kBN;
            b_off = b_row * K + col0 + e % kBN;
            b_in = col0 + e % kBN < K;
        }
    }

    __device__ __forceinline__ void operator()(float* As, float* Bs, int t) const {
        if constexpr (kHoist) hoisted(As, Bs, t);
        else afresh(As, Bs, t);
    }

    // Step t's tiles, every address derived afresh.
    __device__ __forceinline__ void afresh(float* As, float* Bs, int t) const {
        const int n0 = t * kBK;
#pragma unroll
        for (int l = 0; l < kACopies; ++l) {
            const int e = (threadIdx.x + l * kThreads) * kVec, r = e / kBK, c = e % kBK;
            const bool in = row0 + r < M && n0 + c < N;  // VEC 4: N % 4 == 0, so the piece is all in or out
            const float* src = in ? &A[(size_t)(row0 + r) * N + n0 + c] : A;
            if (kVec == 4) cp_async16(&As[r * kLda + c], src, in); else cp_async4(&As[r * kLda + c], src, in);
        }
#pragma unroll
        for (int l = 0; l < kBCopies; ++l) {
            const int e = (threadIdx.x + l * kThreads) * kVec, r = e / kBN, c = e % kBN;
            const bool in = n0 + r < N && col0 + c < K;
            const float* src = in ? &B[(size_t)(n0 + r) * K + col0 + c] : B;
            if (kVec == 4) cp_async16(&Bs[r * kLdb + c], src, in); else cp_async4(&Bs[r * kLdb + c], src, in);
        }
    }

    // Step t's tiles from the pieces: one add for the step, one compare a piece.
    __device__ __forceinline__ void hoisted(float* As, float* Bs, int t) const {
        const int n0 = t * kBK;
        const bool col_in = n0 + a_col < N;  // VEC 4: N % 4 == 0, so the piece is all in or out
        const int a0 = a_off + n0;
        const int dst_a = (threadIdx.x * kVec / kBK) * kLda + a_col;
#pragma unroll
        for (int l = 0; l < kACopies; ++l) {
            const bool in = col_in && l * kARowsApart < a_rows;
            const float* src = in ? A + a0 + l * kARowsApart * N : A;
            if (kVec == 4) cp_async16(&As[dst_a + l * kARowsApart * kLda], src, in);
            else cp_async4(&As[dst_a + l * kARowsApart * kLda], src, in);
        }
        const int rows_left = N - n0 - b_row;  // rows of this step's B tile from piece 0's down
        const int b0 = b_off + n0 * K;
        const int dst_b = b_row * kLdb + (threadIdx.x * kVec) % kBN;
#pragma unroll
        for (int l = 0; l < kBCopies; ++l) {
            const bool in = b_in && l * kBRowsApart < rows_left;
            const float* src = in ? B + b0 + l * kBRowsApart * K : B;
            if (kVec == 4) cp_async16(&Bs[dst_b + l * kBRowsApart * kLdb], src, in);
            else cp_async4(&Bs[dst_b + l * kBRowsApart * kLdb], src, in);
        }
    }
};
