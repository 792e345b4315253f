"""gemmlab: LeetGPU's FP32 matrix multiplication, from a naive kernel to tensor cores."""

__version__ = "0.1.0"

import os as _os

# The CUDA JIT cache can serve NVRTC a cubin without running ptxas, and then the
# `-v` resource report is empty. gemmlab keeps its own cache, with the report, so
# the driver's is switched off; it is read when CUDA initialises, so this must
# run before anything touches the GPU (importing gemmlab first is enough).
_os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
