# Matrix Multiplication in TileLang, LeetGPU's PyTorch format: gemmlab's rung `tilelang-gemm`.
# Judge it with: gemmlab judge --precision tf32 THIS_FILE   ·   gemmlab explain tilelang-gemm
#
# Precision class tf32, not fp32: T.gemm on float32 tiles runs the tensor cores with TF32
# inputs (TileLang's generated CUDA calls mma_sync<kTensorFloat32, …>), about 3e-4 from the
# exact product, which LeetGPU's 1e-4 check against cuBLAS FP32 rejects.
#
# A block computes a 128×128 tile of C with 256 threads; each step of the reduction copies a
# 128×32 tile of A and a 32×128 tile of B into shared memory (T.Pipelined: 3 stages in flight)
# and T.gemm multiplies them. TileLang chooses the rest: on sm_90 it brings the tiles by TMA
# with a producer warpgroup (warp specialisation) where the rows are 16-byte multiples, and
# by plain loads elsewhere (`gemm_any`: TMA, warp specialisation and cp.async switched off, since
# TMA descriptors need N % 4 == K % 4 == 0 and TileLang 0.1.15 fails to generate its cp.async
# path for dynamic sizes).
import tilelang
import tilelang.language as T
import torch

BM, BN, BK, STAGES, THREADS = 128, 128, 32, 3, 256
#: The build for shapes TMA cannot describe: synchronous copies (see above).
NO_TMA = {tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER: True,
          tilelang.PassConfigKey.TL_DISABLE_WARP_SPECIALIZED: True,
          tilelang.PassConfigKey.TL_ENABLE_ASYNC_COPY: False,
          tilelang.PassConfigKey.TIR_USE_ASYNC_COPY: False}


def gemm_program():
    """C = A·B for any M, N, K (dynamic sizes: one compile for every shape)."""
    M, N, K = T.dynamic("M"), T.dynamic("N"), T.dynamic("K")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((M, K), "float32")):
        with T.Kernel(T.ceildiv(K, BN), T.ceildiv(M, BM), threads=THREADS) as (bx, by):
            a_tile = T.alloc_shared((BM, BK), "float32")
            b_tile = T.alloc_shared((BK, BN), "float32")
            acc = T.alloc_fragment((BM, BN), "float32")
            T.clear(acc)
            for step in T.Pipelined(T.ceildiv(N, BK), num_stages=STAGES):
                T.copy(A[by * BM, step * BK], a_tile)  # outside the matrix: zeros
                T.copy(B[step * BK, bx * BN], b_tile)
                T.gemm(a_tile, b_tile, acc)
            T.copy(acc, C[by * BM, bx * BN])  # only what lies inside C is written

    return main


@tilelang.jit
def gemm_aligned():
    return gemm_program()


@tilelang.jit(pass_configs=NO_TMA)
def gemm_any():
    return gemm_program()


# a, b, c are tensors on the GPU
def solve(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, M: int, N: int, K: int):
    aligned = N % 4 == 0 and K % 4 == 0 and all(t.data_ptr() % 16 == 0 for t in (a, b, c))
    (gemm_aligned if aligned else gemm_any)()(a, b, c)
