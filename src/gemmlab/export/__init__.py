"""`gemmlab export`: one rung of the registry as one self-contained LeetGPU file.

A CUDA rung's ``.cu`` holds every kernel the rung may run (`source`) and a host ``extern "C"
solve`` that does what `CudaSolver` does (`host`, `transposed`, `tma`); `document` puts them
together under a header comment. Triton and PyTorch rungs become one ``.py`` (`document.python_text`).
"""

from .document import ExportError, export_text

__all__ = ["ExportError", "export_text"]
