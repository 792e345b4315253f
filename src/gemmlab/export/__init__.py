"""`gemmlab export`: one CUDA rung of the registry as one self-contained LeetGPU ``.cu`` file.

The file holds every kernel the rung may run (`source`: headers inlined, one
namespace per macro set) and a host ``extern "C" solve`` that does what
`CudaSolver` does (`host`: the launch whose precondition holds, its grid,
shared memory and cluster; `tma`: the wgmma rungs' workspace, pre-passes and
TMA descriptors). `document` puts them together under a header comment.
"""

from .document import ExportError, export_text, exportable, supported_kinds

__all__ = ["ExportError", "export_text", "exportable", "supported_kinds"]
