"""Every CUDA kernel of the registry compiled in registry order with NVRTC in this process, as
gemmlab built them before nvrtc_child; prints wgmma_swap's digest and one digest of all builds."""
import base64
import hashlib

from gemmlab import registry
from gemmlab.cuda import compiler, nvrtc_child


def kernels():
    """Every CUDA kernel of the registry once, in registry order (also registry_isolated.py's)."""
    seen = set()
    for impl in registry.IMPLEMENTATIONS:
        if impl.family != "cuda":
            continue
        for launch in impl.launches:
            for kernel in launch.kernels():
                if kernel.key not in seen:
                    seen.add(kernel.key)
                    yield kernel


def main() -> None:
    out = {}
    for kernel in kernels():
        path = compiler.source_path(kernel.source)
        macro = sorted((k, str(v)) for k, v in kernel.defines.items())
        answer = nvrtc_child.build({"text": path.read_text(), "name": path.name, "arch": "sm_90a", "macro": macro,
                                    "ptxas": list(compiler.PTXAS_OPTIONS), "include": str(compiler.KERNEL_DIR)})
        if "cubin" in answer:
            out[kernel.label] = hashlib.sha256(base64.b64decode(answer["cubin"])).hexdigest()[:12]
    for label in sorted(out):
        if label.startswith("wgmma_swap"):
            print(out[label], label)
    print("ALL", hashlib.sha256(repr(sorted(out.items())).encode()).hexdigest()[:8], len(out))


if __name__ == "__main__":
    main()
