"""The judge: a user's solution file judged from a process that runs none of its code.

- `isolate`: one judgement, start to verdict (the entry point; `Verdict`);
- `userfile`, `langcheck`: loading a file in LeetGPU's languages (through `gemmlab.langs.solution`,
  the one loader); what a CPU can check of it;
- `cases`, `runner`, `guards`, `arena`: the cases, the check against float64, the shared buffers;
- `session`, `remote`, `protocol`, `child`: the solution's process and the channel to it;
- `confine`, `boundary`, `sandbox`, `procs`, `limits`: what keeps it in (cgroup, process tree,
  Landlock and seccomp) and what it may spend;
- `timing`, `yardstick`, `hygiene`: the clock that times it without trusting it;
- `report`, `tracebacks`; `sanitize`, `profile`: the verdict on the terminal; the wrapper tools.
"""
