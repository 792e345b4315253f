# Matrix Multiplication in TileLang, in LeetGPU's PyTorch format (solve on GPU tensors, writing C).
# Judge it with: gemmlab judge THIS_FILE
# A correct, simple start in strict FP32: a 16×16 tile of C per block, one thread per element,
# its dot product straight from global memory. T.gemm would be faster, but on float32 it runs the
# tensor cores in TF32, which LeetGPU's 1e-4 check rejects (`gemmlab explain tilelang-gemm`).
import tilelang
import tilelang.language as T
import torch

TILE = 16


@tilelang.jit
def matmul_kernel():
    # Dynamic sizes: one compile serves every shape.
    M, N, K = T.dynamic("M"), T.dynamic("N"), T.dynamic("K")

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, K), "float32"), C: T.Tensor((M, K), "float32")):
        with T.Kernel(T.ceildiv(K, TILE), T.ceildiv(M, TILE), threads=TILE * TILE) as (bx, by):
            acc = T.alloc_fragment((TILE, TILE), "float32")
            T.clear(acc)
            for n in T.serial(N):
                for i, j in T.Parallel(TILE, TILE):
                    row, col = by * TILE + i, bx * TILE + j
                    acc[i, j] += T.if_then_else(row < M and col < K, A[row, n] * B[n, col], 0.0)
            for i, j in T.Parallel(TILE, TILE):
                row, col = by * TILE + i, bx * TILE + j
                if row < M and col < K:
                    C[row, col] = acc[i, j]

    return main


# a, b, c are tensors on the GPU
def solve(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, M: int, N: int, K: int):
    matmul_kernel()(a, b, c)
