"""gemmlab: LeetGPU's FP32 matrix multiplication, from a naive kernel to tensor cores."""

__version__ = "0.1.0"
