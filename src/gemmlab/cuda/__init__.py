"""CUDA kernels from Python: compile, describe, launch.

- `compiler`, `nvrtc_child`, `tools`: NVRTC with a disk cache and the ptxas report; the CLI tools;
- `cubin`, `sass`: what a build declares (registers, shared memory) and its SASS;
- `dispatch`, `needs`: the launch model (a kernel, its geometry, its host plan, when it applies)
  and what a launch needs: its `when` is a `When`, what the shape and operands must be; a
  kernel's `needs` is a `Needs`, what the GPU and the build must be; `precondition` is both in words;
- `driver`: loading cubins and launching on torch's current stream;
- the host plans a launch may have: `transposed` (an Aᵀ pre-pass), `pad` (operands padded),
  `handoff` (split-K: its policy and the split grid), `tma` (TMA descriptors), `hopper` (the wgmma rungs').
"""
