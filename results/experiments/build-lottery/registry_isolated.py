"""Every CUDA kernel of the registry compiled through compile_source (each in a child process of
its own); prints one digest of all builds, to compare with registry_in_process.py."""
import hashlib

from gemmlab import registry

out = {}
seen = set()
for impl in registry.IMPLEMENTATIONS:
    if impl.family != "cuda":
        continue
    for launch in impl.launches:
        for kernel in launch.kernels():
            if kernel.key not in seen:
                seen.add(kernel.key)
                out[kernel.label] = hashlib.sha256(kernel.compile("sm_90a").cubin).hexdigest()[:12]
print("ALL", hashlib.sha256(repr(sorted(out.items())).encode()).hexdigest()[:8], len(out))
