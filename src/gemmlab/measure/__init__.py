"""The measurement layer: how every figure in gemmlab is taken, shared by bench, judge and tune:
the operands (`inputs`), the interleaved timing loop, how many calls it times and the summaries of
what it timed (`timing`), joules per call (`energy`) and what a figure was measured on (`device`).

It imports nothing above it, nor the registry: what measures never reaches into what it measures
(as CUTLASS's `util` and reference-kernels' evaluator do not). A test over the import graph holds
that.
"""
