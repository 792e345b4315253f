# LeetGPU "Matrix Multiplication", Mojo format. Judge it with: gemmlab judge THIS_FILE
# A correct, simple start: one thread per element of C, its dot product straight from global
# memory. `gemmlab explain mojo-tiled` shows the same product tiled in shared memory and vectorised.
from gpu.host import DeviceContext
from gpu.id import block_dim, block_idx, thread_idx
from memory import UnsafePointer
from math import ceildiv

alias TILE = 16


fn matmul_kernel(A: UnsafePointer[Float32], B: UnsafePointer[Float32], C: UnsafePointer[Float32],
                 M: Int32, N: Int32, K: Int32):
    var row = Int(block_idx.y * block_dim.y + thread_idx.y)
    var col = Int(block_idx.x * block_dim.x + thread_idx.x)
    if row < Int(M) and col < Int(K):
        var acc: Float32 = 0
        for n in range(Int(N)):
            acc += A[row * Int(N) + n] * B[n * Int(K) + col]
        C[row * Int(K) + col] = acc


# A, B, C are device pointers (i.e. pointers to memory on the GPU)
@export
def solve(A: UnsafePointer[Float32], B: UnsafePointer[Float32], C: UnsafePointer[Float32],
          M: Int32, N: Int32, K: Int32):
    var ctx = DeviceContext()
    ctx.enqueue_function[matmul_kernel](
        A, B, C, M, N, K,
        grid_dim=(ceildiv(Int(K), TILE), ceildiv(Int(M), TILE)),
        block_dim=(TILE, TILE),
    )
    ctx.synchronize()
