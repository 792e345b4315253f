"""The device half of an exported file: every kernel a rung may run, as one translation unit.

gemmlab compiles each (source, macros) pair on its own through NVRTC; an exported file holds
them all at once. The headers are inlined once, at the top, in include order; each pair becomes a
*variant* in ``namespace vN``, its macros ``#define``d before and ``#undef``ed after, its
``extern "C"`` dropped (two variants of one source would define the same C symbol); all of it
inside ``namespace gemmlab``, apart from the host's ``<cstdint>``.

The file must build under any flags a grader passes (none, ``-arch=sm_80``, ``sm_90a``, …), so a
variant that needs more than plain CUDA (`cuda.needs.Needs`) is real only in the device passes
whose target has its features; elsewhere its kernels keep their signatures and a body that traps,
and the host, which reads which features the loaded image holds (``image_has``), never launches
them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..cuda.compiler import source_path
from ..cuda.dispatch import Kernel
from ..cuda.needs import Needs

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


def real_pass(needs: Needs) -> str:
    """The preprocessor test true where a variant that `needs` this is compiled for real: the
    host pass (which only needs the kernels' signatures) and the device passes that have it."""
    return f"!defined(__CUDA_ARCH__) || ({needs.guard})"


def features_block() -> str:
    """`gemmlab::image_features`: in each device pass, the bits (`Needs.bit`) of the features
    its target has, by the same tests that choose the variants' real code; the host reads the
    value of the image the driver loaded."""
    lines = ["// What this build's loaded device code holds, one bit per feature (cuda/needs.py), by",
             "// the same tests that choose each variant's real code; the host reads it (image_has)."]
    bits = []
    for needs in Needs:
        if needs is Needs.ANY:
            continue
        name = f"GEMMLAB_HAS_{needs.name}"
        lines += [f"#if defined(__CUDA_ARCH__) && ({needs.guard})  // {needs}",
                  f"#define {name} {needs.bit}", "#else", f"#define {name} 0", "#endif"]
        bits.append(name)
    lines.append(f"__device__ int image_features = {' | '.join(bits)};")
    return "\n".join(lines) + "\n"


class SourceError(ValueError):
    """A kernel source the exporter cannot put into one file as it is."""


def read(name: str) -> str:
    return source_path(name).read_text()


def headers(sources: list[str]) -> list[str]:
    """The headers the sources include, once each, each after the headers it includes."""
    seen: list[str] = []

    def visit(name: str) -> None:
        for header in _INCLUDE.findall(read(name)):
            if header not in seen:
                visit(header)
                seen.append(header)

    for name in sources:
        visit(name)
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


@dataclass(frozen=True)
class Variant:
    """One source compiled with one set of macros: namespace ``v{index}``."""

    index: int
    source: str
    defines: tuple[tuple[str, int], ...]
    entries: tuple[str, ...]  # the kernels of the source the rung may run, in order of first use
    needs: Needs  # the strongest of theirs: real only in the device passes that have it

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
    with a body that traps (launch bounds dropped): the macros a declaration uses (bigtile.cu's
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


def _kernel_name(declaration: str) -> str:
    """The kernel a `__global__ … {` declaration defines: the name before its parameter list."""
    head = _LAUNCH_BOUNDS.sub("", declaration)
    name = re.search(r"(\w+)\s*\(", head)
    if not name:
        raise SourceError(f"no kernel name in {declaration.strip()!r}")
    return name.group(1)


def _body_end(text: str, opening: int) -> int:
    """The index just past the brace that closes the one at `opening` (kernel bodies hold no
    braces in strings or character literals; comments are skipped)."""
    depth, i = 0, opening
    while i < len(text):
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = len(text) if i < 0 else i
            continue
        if text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise SourceError("a kernel body without its closing brace")


def only_kernels(text: str, entries: tuple[str, ...], source: str) -> str:
    """`text` without the definitions of its kernels that are not in `entries`: a pre-pass file
    holds kernels of several rungs, and one that needs sm_80 (a TF32 rounding) must not stop a
    portable rung's file from building for sm_75."""
    cuts = []
    for decl in _KERNEL_DECL.finditer(text):
        if _kernel_name(decl.group(0)) in entries:
            continue
        end = _body_end(text, decl.end() - 1)
        if any(_DIRECTIVE.match(line) for line in text[decl.start():end].splitlines()):
            raise SourceError(f"{source}: the unused kernel {_kernel_name(decl.group(0))} holds "
                              "conditionals or macro definitions, so it cannot be left out")
        cuts.append((decl.start(), end))
    for start, end in reversed(cuts):
        text = text[:start] + text[end:]
    return text


def variant_text(variant: Variant, header_macros: set[str]) -> str:
    """``namespace vN { #define … <source> #undef … }``."""
    text = read(variant.source)
    body = only_kernels(_kernel_text(text, variant.source), variant.entries, variant.source)
    defines = "\n".join(f"#define {k} {v}" for k, v in variant.defines)
    names = sorted((set(_DEFINE.findall(text)) | {k for k, _ in variant.defines}) - header_macros)
    undefs = "\n".join(f"#undef {name}" for name in names)
    if variant.needs is not Needs.ANY:
        body = (f"#if {real_pass(variant.needs)}  // {variant.needs}\n{body}\n"
                f"#else  // a device pass without them: the same kernels, with bodies that trap (never launched)\n"
                f"{_trapping_kernels(body)}\n#endif")
    return (f"// ---- {variant.namespace}: {variant.title} ----\nnamespace {variant.namespace} {{\n"
            f"{defines}\n{body}\n{undefs}\n}}  // namespace {variant.namespace}\n")


class Variants:
    """The variants of a rung in order of first use, and which one holds each kernel."""

    def __init__(self) -> None:
        self.all: list[Variant] = []
        self._by_key: dict[tuple, Variant] = {}

    def add(self, kernel: Kernel) -> Variant:
        """The variant that holds `kernel`, made or widened: its entries and its needs grow."""
        key = (kernel.source, tuple(sorted(kernel.defines.items())))
        if not re.search(rf"__global__\b[^;{{]*\b{re.escape(kernel.entry)}\s*\(", read(kernel.source)):
            raise SourceError(f"{kernel.source} has no __global__ kernel {kernel.entry}")
        found = self._by_key.get(key)
        if found is None:
            found = Variant(len(self.all), kernel.source, key[1], (kernel.entry,), kernel.needs)
            self.all.append(found)
        else:
            entries = found.entries + (() if kernel.entry in found.entries else (kernel.entry,))
            found = dataclasses.replace(found, entries=entries, needs=Needs.of(found.needs, kernel.needs))
            self.all[found.index] = found
        self._by_key[key] = found
        return found

    def ref(self, kernel: Kernel) -> str:
        """The C++ name of a kernel in the exported file."""
        return self._by_key[(kernel.source, tuple(sorted(kernel.defines.items())))].qualified(kernel.entry)

    def device_code(self) -> str:
        sources = [v.source for v in self.all]
        names = headers(sources)
        header_macros = {macro for name in names for macro in _DEFINE.findall(read(name))}
        parts = [header_text(names), features_block()] + [variant_text(v, header_macros) for v in self.all]
        return UNROLL_HELPERS + "namespace gemmlab {\n\n" + "\n".join(parts) + "\n}  // namespace gemmlab\n"

    def includes(self) -> list[str]:
        sources = [v.source for v in self.all]
        return system_includes(headers(sources) + sources)


def macros_of(defines: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in defines.items()) or "none"
