"""gemmlab: LeetGPU's FP32 matrix multiplication, from a naive kernel to tensor cores.

Importing gemmlab changes nothing in the process: the environment it needs is
set by `gemmlab.runtime.configure()`, which the command line calls first.
"""

__version__ = "0.1.0"
