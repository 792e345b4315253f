"""The device half of an exported file: every kernel a rung may run, as one translation unit.

gemmlab compiles each (source, macros) pair on its own through NVRTC; an
exported file holds them all at once. So:

* the headers a source includes are inlined once, at the top, in include
  order (``#pragma once`` kept by inlining each only once); nothing in them
  depends on a kernel's macros;
* each (source, macros) pair becomes a *variant*: the source's text inside
  ``namespace vN``, its macros ``#define``d before and every macro it reads or
  defines ``#undef``ed after, so the next variant starts clean; its
  ``extern "C" __global__`` kernels lose their ``extern "C"`` (two variants of
  one source would otherwise define the same C symbol);
* all of it sits inside ``namespace gemmlab``, so a header's own typedefs
  (hopper.cuh's ``uint64_t``) cannot clash with the host's ``<cstdint>``.

A Hopper variant (wgmma, setmaxnreg) only compiles for sm_90a, yet
``nvcc -arch=sm_90a`` also builds compute_90 PTX. In every device pass but
sm_90a's, such a variant is replaced by kernels of the same signatures whose
body traps: a device that cannot run the real kernel fails loudly.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..cuda.compiler import source_path
from ..cuda.rung import Kernel

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"[ \t]*$', re.M)
_SYSTEM_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<[^>]+>[ \t]*$", re.M)
_PRAGMA_ONCE = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+once[ \t]*$", re.M)
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)", re.M)
#: `#pragma unroll NAME`: nvcc does not expand a macro there, so it goes through _Pragma.
_UNROLL_MACRO = re.compile(r"^([ \t]*)#[ \t]*pragma[ \t]+unroll[ \t]+([A-Za-z_]\w*)[ \t]*$", re.M)
UNROLL_HELPERS = ("#define GEMMLAB_PRAGMA(text) _Pragma(#text)\n"
                  "#define GEMMLAB_UNROLL(n) GEMMLAB_PRAGMA(unroll n)  // n expanded before it is quoted\n")
_EXTERN_C = re.compile(r'extern[ \t]+"C"[ \t]+(__global__)')
_KERNEL_DECL = re.compile(r"__global__\b[^{;]*?\{")
#: The directives that set macros and choose code: what the trapping kernels keep of their source.
_DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif|define|undef)\b")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)\s*")
#: True in the host pass and the sm_90a device pass: where wgmma and setmaxnreg compile.
SM90A_PASS = "!defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)"


class SourceError(ValueError):
    """A kernel source the exporter cannot put into one file as it is."""


def read(name: str) -> str:
    return source_path(name).read_text()


def _headers(text: str, seen: list[str]) -> None:
    """Append the headers `text` includes to `seen`, each after the headers it includes."""
    for name in _INCLUDE.findall(text):
        if name not in seen:
            _headers(read(name), seen)
            seen.append(name)


def headers(sources: list[str]) -> list[str]:
    seen: list[str] = []
    for name in sources:
        _headers(read(name), seen)
    return seen


def _strip_includes(text: str) -> str:
    text = _PRAGMA_ONCE.sub("", text)
    return _INCLUDE.sub(lambda m: f"// #include \"{m.group(1)}\": inlined at the top of the file", text)


def system_includes(names: list[str]) -> list[str]:
    """`#include <…>` lines of the sources and headers: they go above every namespace."""
    found: list[str] = []
    for name in names:
        for line in _SYSTEM_INCLUDE.findall(read(name)):
            if line.strip() not in found:
                found.append(line.strip())
    return found


def header_text(names: list[str]) -> str:
    return "\n".join(f"// ---- {name} ----\n{_strip_includes(read(name)).strip()}\n" for name in names)


def macros_defined(text: str) -> set[str]:
    return set(_DEFINE.findall(text))


@dataclass(frozen=True)
class Variant:
    """One source compiled with one set of macros: namespace ``v{index}``."""

    index: int
    source: str
    defines: tuple[tuple[str, int], ...]
    sm90a_only: bool  # wgmma and friends: real only in the sm_90a pass

    @property
    def namespace(self) -> str:
        return f"v{self.index}"

    def qualified(self, entry: str) -> str:
        return f"gemmlab::{self.namespace}::{entry}"

    @property
    def title(self) -> str:
        macros = ", ".join(f"{k}={v}" for k, v in self.defines) or "its own defaults"
        return f"{self.source} with {macros}"


def _kernel_text(text: str, source: str) -> str:
    """The source without its includes, its kernels no longer extern "C"."""
    text = _EXTERN_C.sub(r"\1", _strip_includes(text))
    text = _UNROLL_MACRO.sub(r"\1GEMMLAB_UNROLL(\2)", text)
    if 'extern "C"' in text:
        raise SourceError(f'{source}: an extern "C" other than `extern "C" __global__` '
                          "cannot go into a namespace")
    return text.strip()


def _trapping_kernels(text: str) -> str:
    """The source's preprocessor directives, each kernel's declaration among them where it stood
    with a body that traps (launch bounds dropped): the macros a declaration uses (16_bigtile.cu's
    BIGTILE_ARGS) and the conditionals that choose between declarations (SPLIT) as the source
    sets them."""
    pieces = [(m.start(), _LAUNCH_BOUNDS.sub("", m.group(0)) + " __trap(); }") for m in _KERNEL_DECL.finditer(text)]
    at, continued = 0, False
    for line in text.splitlines(keepends=True):
        if continued or _DIRECTIVE.match(line):
            pieces.append((at, line.rstrip("\n")))
            continued = line.rstrip().endswith("\\")
        at += len(line)
    return "\n".join(piece for _, piece in sorted(pieces))


def variant_text(variant: Variant, header_macros: set[str]) -> str:
    """``namespace vN { #define … <source> #undef … }``."""
    text = read(variant.source)
    body = _kernel_text(text, variant.source)
    defines = "\n".join(f"#define {k} {v}" for k, v in variant.defines)
    names = sorted((macros_defined(text) | {k for k, _ in variant.defines}) - header_macros)
    undefs = "\n".join(f"#undef {name}" for name in names)
    if variant.sm90a_only:
        body = (f"#if {SM90A_PASS}\n{body}\n#else  // a device pass without wgmma: kernels that trap\n"
                f"{_trapping_kernels(body)}\n#endif")
    return (f"// ---- {variant.namespace}: {variant.title} ----\nnamespace {variant.namespace} {{\n"
            f"{defines}\n{body}\n{undefs}\n}}  // namespace {variant.namespace}\n")


class Variants:
    """The variants of a rung in order of first use, and which one holds each kernel."""

    def __init__(self) -> None:
        self.all: list[Variant] = []
        self._by_key: dict[tuple, Variant] = {}

    def add(self, kernel: Kernel, sm90a_only: bool) -> Variant:
        key = (kernel.source, tuple(sorted(kernel.defines.items())))
        found = self._by_key.get(key)
        if found is None:
            found = Variant(len(self.all), kernel.source, key[1], sm90a_only)
            self.all.append(found)
            self._by_key[key] = found
        elif sm90a_only and not found.sm90a_only:
            raise SourceError(f"{kernel.label} is both a Hopper kernel and a portable one")
        if not re.search(rf"__global__\b[^;{{]*\b{re.escape(kernel.entry)}\s*\(", read(kernel.source)):
            raise SourceError(f"{kernel.source} has no __global__ kernel {kernel.entry}")
        return found

    def ref(self, kernel: Kernel) -> str:
        """The C++ name of a kernel in the exported file."""
        return self._by_key[(kernel.source, tuple(sorted(kernel.defines.items())))].qualified(kernel.entry)

    def device_code(self) -> str:
        sources = [v.source for v in self.all]
        names = headers(sources)
        header_macros: set[str] = set()
        for name in names:
            header_macros |= macros_defined(read(name))
        parts = [header_text(names)] + [variant_text(v, header_macros) for v in self.all]
        return UNROLL_HELPERS + "namespace gemmlab {\n\n" + "\n".join(parts) + "\n}  // namespace gemmlab\n"

    def includes(self) -> list[str]:
        sources = [v.source for v in self.all]
        return system_includes(headers(sources) + sources)


def macros_of(defines: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in defines.items()) or "none"
