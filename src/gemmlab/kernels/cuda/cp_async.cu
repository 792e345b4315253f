// cp.async: the copy engine moves tiles global → shared (sm_80+).
//
// Step 2.5's 128×128 tiling, but no thread carries the next tile through its
// registers: `cp.async.cg` copies 16 bytes straight into shared memory,
// asynchronously, bypassing L1. Each thread issues one copy of A and one of
// B per tile, commits them as a group, and `cp.async.wait_group 1` lets the
// group for tile i+1 stay in flight while tile i is computed. A copy outside
// the matrix gets source size 0, which the hardware turns into 16 zero bytes.
#include "common.cuh"

#define BM 128
#define BN 128
#define BK 16
#define TM 8
#define TN 4
#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS) cp_async(GEMM_ARGS) {
    __shared__ __align__(16) float As[2][BM][BK];
    __shared__ __align__(16) float Bs[2][BK][BN];
    const int tid = threadIdx.x;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int trow = (tid / (BN / TN)) * TM, tcol = (tid % (BN / TN)) * TN;
    // One 16-byte copy of A and one of B per thread per tile (512 × 4 floats each).
    const int ar = tid / (BK / 4), ac = (tid % (BK / 4)) * 4;
    const int br = tid / (BN / 4), bc = (tid % (BN / 4)) * 4;
    float acc[TM][TN] = {};
    float ra[TM];

    auto issue = [&](int buf, int n0) {
        const bool a_in = row0 + ar < M && n0 + ac < N;
        const bool b_in = n0 + br < N && col0 + bc < K;
        // An outside copy still needs a valid address; it reads 0 bytes of it.
        cp_async16(&As[buf][ar][ac], a_in ? &A[(row0 + ar) * N + n0 + ac] : A, a_in);
        cp_async16(&Bs[buf][br][bc], b_in ? &B[(n0 + br) * K + col0 + bc] : B, b_in);
        cp_async_commit();
    };

    issue(0, 0);
    int buf = 0;
    for (int n0 = 0; n0 < N; n0 += BK) {
        if (n0 + BK < N) {
            issue(buf ^ 1, n0 + BK);
            cp_async_wait<1>();  // tile n0 has landed; tile n0+BK may still fly
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) ra[i] = As[buf][trow + i][k];
            const float4 b = *reinterpret_cast<const float4*>(&Bs[buf][k][tcol]);
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                acc[i][0] = fmaf(ra[i], b.x, acc[i][0]);
                acc[i][1] = fmaf(ra[i], b.y, acc[i][1]);
                acc[i][2] = fmaf(ra[i], b.z, acc[i][2]);
                acc[i][3] = fmaf(ra[i], b.w, acc[i][3]);
            }
        }
        __syncthreads();  // the next issue overwrites this buffer
        buf ^= 1;
    }
    const int col = col0 + tcol;
    if (col >= K) return;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + trow + i;
        if (row < M)
            *reinterpret_cast<float4*>(&C[row * K + col]) =
                make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
}
