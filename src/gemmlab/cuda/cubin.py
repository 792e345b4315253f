"""What a cubin declares about its kernels, read from its ELF without a GPU or a tool.

Each entry function has a ``.nv.info.<entry>`` section: a list of attributes,
each a 4-byte header (format, attribute, 16-bit value or size) and, for the
sized format, that many bytes. ``__launch_bounds__(T)`` becomes the attribute
MAX_THREADS with the block's limit (T, 1, 1), so the kernel's own idea of its
block can be set against the registry's.
"""

from __future__ import annotations

import struct

_SIZED = 0x04  # EIFMT_SVAL: a 16-bit size, then the bytes
_MAX_THREADS = 0x05  # EIATTR_MAX_THREADS: three 32-bit limits, x y z


def sections(elf: bytes) -> dict[str, bytes]:
    """Section name → contents of a 64-bit little-endian ELF."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)

    def header(i: int) -> tuple[int, int, int]:
        name, = struct.unpack_from("<I", elf, shoff + i * shentsize)
        offset, size = struct.unpack_from("<QQ", elf, shoff + i * shentsize + 0x18)
        return name, offset, size

    _, str_off, _ = header(shstrndx)
    out = {}
    for i in range(shnum):
        name, offset, size = header(i)
        end = elf.index(b"\0", str_off + name)
        out[elf[str_off + name:end].decode()] = elf[offset:offset + size]
    return out


def defined_functions(elf: bytes) -> set[str]:
    """The global functions a shared library defines (its .dynsym), read without loading it: loading
    would run its constructors, and a user's library is not the judge's to run."""
    found = sections(elf)
    table, names = found.get(".dynsym", b""), found.get(".dynstr", b"")
    out = set()
    for at in range(0, len(table) - 23, 24):  # Elf64_Sym
        name, info, _, shndx = struct.unpack_from("<IBBH", table, at)
        if shndx != 0 and info & 0xF == 2 and info >> 4 in (1, 2):  # defined, FUNC, GLOBAL or WEAK
            out.add(names[name:names.index(b"\0", name)].decode(errors="replace"))
    return out


def max_threads(cubin: bytes, entry: str) -> tuple[int, int, int] | None:
    """The (x, y, z) limit of `entry`'s __launch_bounds__, or None where it declares none."""
    info = sections(cubin).get(f".nv.info.{entry}", b"")
    at = 0
    while at + 4 <= len(info):
        fmt, attr, value = struct.unpack_from("<BBH", info, at)
        at += 4
        if fmt != _SIZED:
            continue
        if attr == _MAX_THREADS:
            return struct.unpack_from("<III", info, at)
        at += value
    return None
