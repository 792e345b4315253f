# LeetGPU "Matrix Multiplication", CuTe DSL format. Judge it with: gemmlab judge THIS_FILE
# A correct, simple start: one thread per element of C, its dot product straight from global
# memory. `gemmlab explain cute-tiled` shows the same product with CuTe's tiles, copies and MMA atoms.
import cutlass
import cutlass.cute as cute

TILE = 16


@cute.kernel
def matmul_kernel(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, M: cutlass.Int32, N: cutlass.Int32,
                  K: cutlass.Int32):
    tx, ty, _ = cute.arch.thread_idx()
    bx, by, _ = cute.arch.block_idx()
    row = by * TILE + ty
    col = bx * TILE + tx
    if row < M:
        if col < K:
            acc = cutlass.Float32(0.0)
            for n in range(N):
                acc += A[row, n] * B[n, col]
            C[row, col] = acc


# A, B, C are tensors on the GPU
@cute.jit
def solve(A: cute.Tensor, B: cute.Tensor, C: cute.Tensor, M, N, K):
    grid = ((K + TILE - 1) // TILE, (M + TILE - 1) // TILE, 1)
    matmul_kernel(A, B, C, M, N, K).launch(grid=grid, block=(TILE, TILE, 1))
