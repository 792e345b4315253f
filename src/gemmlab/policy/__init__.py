"""What `default` runs at a shape, and why: the runtime policy, read by the registry, below it.

- `classes`: the shape classes (a size in waves of tiles, a layout), the one definition;
- `preludes`: kernels for a kind of shape across the classes (`short`, `gemv`, `thin`), from a
  calibrated number of outputs;
- `spaces`: each tunable rung's knobs, how a record's winner is built from them, and the twins that
  refine it (split-K where splitting pays, the narrow and 4-byte twins);
- `twins`: the launches `default` builds again from a rung's (split, on a line of blocks, B by
  4-byte copies, the thin kernels at their floor), and their thresholds;
- `record`: the tune record (schema, validation, which one this GPU reads, a sibling's where it has none);
- `default`: `default`'s chain from the record: preludes, each class's winner under its class, then
  warptile's launches; every split bigtile launch on a line of blocks (`twins.tailed`).

- `tensor`: `tf32`'s and `3xtf32`'s chains (the Hopper kernels, their split twins, the small and
  thin kernels below them) and their thresholds.
`gemmlab explain default --shape MxNxK` names the launch a shape runs and the rule that chose it.
`gemmlab.tune` searches the spaces and writes records; it is not imported by the registry.
"""
