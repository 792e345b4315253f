# LeetGPU "Matrix Multiplication", JAX format. Judge it with: gemmlab judge THIS_FILE
import jax
import jax.numpy as jnp


# A (M×N) and B (N×K) are on the GPU; return C = A·B (M×K).
@jax.jit
def _matmul(A, B):
    return jnp.zeros((A.shape[0], B.shape[1]), dtype=A.dtype)  # TODO


def solve(A, B, M: int, N: int, K: int):
    return _matmul(A, B)
