"""The measurement layer: how every figure in gemmlab is taken, shared by bench, judge and tune.

- `inputs`: the operands a measurement draws (seeded uniform values, LeetGPU's timing range);
- `timing`: the interleaved timing loop (CUDA events per call, or the host clock);
- `stats`: summaries of timings, and how many calls a shape needs;
- `device`: what a figure was measured on (the GPU, its peaks, clocks, versions).

It sits below bench, judge and tune and imports none of them, nor the registry: the
reference and the timing never reach into what they measure (CUTLASS's `util`, and
reference-kernels' evaluator, which no submission reads). A test over the import graph
holds that.
"""
