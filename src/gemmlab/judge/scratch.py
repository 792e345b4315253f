"""The solution's scratch folder: what it holds, and its removal.

A solution shapes this folder as it likes: folders nested past Python's recursion limit, paths
longer than PATH_MAX, folders it may not read. `usage` says so where it cannot measure a part
(a limit of its own for the judge's watch), and `remove` walks by directory descriptors, one at a
time, so that no depth or length keeps anything on the host.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass
class Usage:
    bytes: int = 0  # the blocks of every entry: files, folders and links (a long link's target takes one)
    entries: int = 0  # each takes an inode, an empty file too
    unmeasured: str = ""  # a folder the walk could not read, and why ("" where it read them all)


def usage(folder: Path) -> Usage:
    """What the entries under `folder` take."""
    out = Usage()
    stack = [str(folder)]
    while stack:
        path = stack.pop()
        try:
            with os.scandir(path) as found:
                for entry in found:
                    out.entries += 1
                    with contextlib.suppress(FileNotFoundError):
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        out.bytes += entry.stat(follow_symlinks=False).st_blocks * 512
        except FileNotFoundError:
            continue
        except OSError as exc:
            out.unmeasured = out.unmeasured or f"{exc.strerror or exc} ({len(path)} characters deep)"
    return out


def remove(root: Path) -> None:
    """`root` and everything under it, without recursion and without following links: down one
    folder at a time by its descriptor, up by "..", what cannot be removed skipped."""
    try:
        fd = os.open(root, _DIR)
    except OSError:
        return
    names: list[str] = []
    stuck: set[tuple[int, int]] = set()
    try:
        while True:
            down = _first_folder_emptying(fd, stuck)
            if down is not None:
                try:
                    child = os.open(down[0], _DIR, dir_fd=fd)
                except OSError:
                    stuck.add(down[1])
                    continue
                os.close(fd)
                fd = child
                names.append(down[0])
                continue
            if not names:
                break
            here = os.fstat(fd)
            parent = os.open("..", _DIR, dir_fd=fd)
            os.close(fd)
            fd = parent
            try:
                os.rmdir(names.pop(), dir_fd=fd)
            except OSError:
                stuck.add((here.st_dev, here.st_ino))
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(root)


def _first_folder_emptying(fd: int, stuck: set[tuple[int, int]]) -> tuple[str, tuple[int, int]] | None:
    """Unlink every non-folder in the folder `fd`; its first subfolder not `stuck` (name, identity)."""
    with os.scandir(fd) as entries:
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    if (st.st_dev, st.st_ino) not in stuck:
                        return entry.name, (st.st_dev, st.st_ino)
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except OSError:
                continue
    return None
