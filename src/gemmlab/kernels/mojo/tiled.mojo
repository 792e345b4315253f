# LeetGPU "Matrix Multiplication", Mojo format: gemmlab's rung `mojo-tiled` (strict FP32).
# Judge it with: gemmlab judge THIS_FILE   ·   why it is written so: gemmlab explain mojo-tiled
#
# A block of 256 threads computes a 64×64 tile of C, each thread a 4×4 block of it. Every step
# of the reduction stages a 64×16 tile of A (transposed, so a thread's four rows lie side by
# side) and a 16×64 tile of B in shared memory; each thread then reads four A and four B values
# as one SIMD vector each and does 16 FMAs. Where N and K are multiples of 4 the global loads and
# the stores of C are 16-byte vectors; elsewhere the same kernel, instantiated with VEC=False,
# moves one float at a time. Every output is one FMA chain in reduction order: strict FP32.
from gpu import barrier, block_idx, thread_idx
from gpu.host import DeviceContext
from gpu.memory import AddressSpace
from math import ceildiv
from memory import UnsafePointer, stack_allocation

alias BM = 64
alias BN = 64
alias BK = 16
alias THREADS = 256
alias F4 = SIMD[DType.float32, 4]


fn tiled_kernel[VEC: Bool](A: UnsafePointer[Float32], B: UnsafePointer[Float32], C: UnsafePointer[Float32],
                           M: Int32, N: Int32, K: Int32):
    var m = Int(M)
    var n = Int(N)
    var k = Int(K)
    var t = Int(thread_idx.x)
    var tx = t % 16  # this thread's four columns: tx*4 …
    var ty = t // 16  # and four rows: ty*4 …
    var row0 = Int(block_idx.y) * BM
    var col0 = Int(block_idx.x) * BN
    # As[r][i]: A's tile transposed (reduction index r, row i); Bs[r][j]: B's tile as it lies.
    var As = stack_allocation[BK * BM, Float32, alignment=16, address_space = AddressSpace.SHARED]()
    var Bs = stack_allocation[BK * BN, Float32, alignment=16, address_space = AddressSpace.SHARED]()
    # Which four elements of each tile this thread copies.
    var a_row = t // 4
    var a_red = (t % 4) * 4
    var b_red = t // 16
    var b_col = (t % 16) * 4
    var acc0 = F4(0)
    var acc1 = F4(0)
    var acc2 = F4(0)
    var acc3 = F4(0)

    for k0 in range(0, n, BK):
        # A's tile: four consecutive reduction elements of one row, written transposed.
        var av = F4(0)
        var ga = row0 + a_row
        if ga < m:
            @parameter
            if VEC:
                if k0 + a_red < n:  # N % 4 == 0: all four are inside
                    av = A.load[width=4, alignment=16](ga * n + k0 + a_red)
            else:
                @parameter
                for j in range(4):
                    if k0 + a_red + j < n:
                        av[j] = A[ga * n + k0 + a_red + j]
        @parameter
        for j in range(4):
            As[(a_red + j) * BM + a_row] = av[j]
        # B's tile: four consecutive columns of one reduction row.
        var bv = F4(0)
        var gb = k0 + b_red
        if gb < n:
            @parameter
            if VEC:
                if col0 + b_col < k:  # K % 4 == 0: all four are inside
                    bv = B.load[width=4, alignment=16](gb * k + col0 + b_col)
            else:
                @parameter
                for j in range(4):
                    if col0 + b_col + j < k:
                        bv[j] = B[gb * k + col0 + b_col + j]
        Bs.store[alignment=16](b_red * BN + b_col, bv)
        barrier()

        @parameter
        for r in range(BK):
            var a = As.load[width=4, alignment=16](r * BM + ty * 4)
            var b = Bs.load[width=4, alignment=16](r * BN + tx * 4)
            acc0 = b.fma(F4(a[0]), acc0)
            acc1 = b.fma(F4(a[1]), acc1)
            acc2 = b.fma(F4(a[2]), acc2)
            acc3 = b.fma(F4(a[3]), acc3)
        barrier()

    var col = col0 + tx * 4
    var rows = InlineArray[F4, 4](acc0, acc1, acc2, acc3)
    @parameter
    for i in range(4):
        var r = row0 + ty * 4 + i
        if r < m:
            @parameter
            if VEC:
                if col < k:
                    C.store[alignment=16](r * k + col, rows[i])
            else:
                @parameter
                for j in range(4):
                    if col + j < k:
                        C[r * k + col + j] = rows[i][j]


# A, B, C are device pointers (i.e. pointers to memory on the GPU)
@export
def solve(A: UnsafePointer[Float32], B: UnsafePointer[Float32], C: UnsafePointer[Float32],
          M: Int32, N: Int32, K: Int32):
    var ctx = DeviceContext()
    var grid = (ceildiv(Int(K), BN), ceildiv(Int(M), BM))
    if Int(N) % 4 == 0 and Int(K) % 4 == 0:
        ctx.enqueue_function[tiled_kernel[True]](A, B, C, M, N, K, grid_dim=grid, block_dim=THREADS)
    else:
        ctx.enqueue_function[tiled_kernel[False]](A, B, C, M, N, K, grid_dim=grid, block_dim=THREADS)
    ctx.synchronize()
