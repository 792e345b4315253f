"""A launch's tile and data path as SVG, drawn from its geometry (`facts.geometry`) and, where
`gemmlab inspect` ran, from what its SASS holds (which copies and which arithmetic it issues).

Left: the block's tile of C with the A and B tiles of one reduction step beside it, to scale.
Right: the path the operands take, global memory → (pre-passes) → shared memory → registers →
C, each arrow named by the instructions that carry it. The template `diagram.svg` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The longer side of the C tile, in pixels; everything on the left is drawn to that scale.
SIDE = 150.0
WIDTH = 660


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    w: float
    h: float
    label: str
    note: str = ""
    kind: str = "store"  # the CSS class: store, pass, c


def _first(sass: dict | None, choices: tuple[tuple[str, str], ...], otherwise: str, unknown: str) -> str:
    """The words of the first SASS instruction in `choices` the kernel issues; `unknown` without SASS."""
    if not sass:
        return unknown
    return next((words for key, words in choices if sass.get(key)), otherwise)


def _loads(sass: dict | None) -> str:
    return _first(sass, (("UTMALDG", "TMA copies (UTMALDG)"), ("LDGSTS", "cp.async (LDGSTS)"),
                         ("LDG.128", "16-byte loads (LDG.128)")), "4-byte loads (LDG)", "loads")


def _shared_reads(sass: dict | None) -> str:
    return _first(sass, (("HGMMA", "wgmma reads its operands here"), ("LDS.128", "LDS.128")), "LDS", "reads")


def _arithmetic(sass: dict | None) -> str:
    for key, words in (("HGMMA", "wgmma (HGMMA)"), ("HMMA", "mma (HMMA)"), ("FFMA", "FMA (FFMA)")):
        if sass and sass.get(key):
            return f"{words} × {sass[key]}"
    return ""


def _stores(sass: dict | None) -> str:
    return _first(sass, (("STG.128", "16-byte stores (STG.128)"),), "stores", "stores")


def tile_picture(rows: int, cols: int, step: int, threads: int | None, what: str = "block") -> dict:
    """The C tile and one step's A and B tiles, to scale (a side never thinner than 4 px)."""
    scale = SIDE / max(rows, cols)
    cw, ch = cols * scale, rows * scale
    sw = max(step * scale, 4.0)
    x0, y0 = 40 + sw, 60 + sw
    per = rows * cols / threads if threads else None
    # where the outputs do not divide among the threads (warp-specialised producers own none), say so
    outputs = (f"{per:g} output{'s' if per != 1 else ''} per thread" if per and per >= 1 and per == int(per) else
               f"{rows * cols} outputs over the threads that compute" if threads else "")
    return {"c": Box(x0, y0, cw, ch, f"C tile {rows}×{cols}", outputs, "c"),
            "a": Box(x0 - sw - 6, y0, sw, ch, f"A {rows}×{step}", "", "a"),
            "b": Box(x0, y0 - sw - 6, cw, sw, f"B {step}×{cols}", "", "b"),
            "what": f"one {what}" + (f", {threads} threads" if threads else ""),
            "bottom": y0 + ch}


def path_boxes(geometry: dict, inspected: dict | None) -> tuple[list[Box], list[tuple[Box, Box, str]]]:
    """The boxes on the right and the arrows between them, each arrow with its label."""
    sass = inspected.get("sass") if inspected else None
    x, w, h, gap = 390.0, 240.0, 34.0, 26.0
    y = 20.0
    boxes = [Box(x, y, w, h, "global memory: A, B")]
    for entry in geometry["pre_passes"]:
        y += h + gap
        boxes.append(Box(x, y, w, h, f"pre-pass {entry}", "a copy, back in global memory", "pass"))
    arrows = []
    static = inspected["smem_bytes"] if inspected else geometry["static_smem"]
    dynamic = inspected["dynamic_smem_bytes"] if inspected else geometry["dynamic_smem"]
    if static or dynamic:
        y += h + gap
        copies = geometry["buffers"] or geometry["defines"].get("STAGES")
        note = f"{static + dynamic:,} B per block" + (f", {copies} cop{'ies' if copies != 1 else 'y'}" if copies else "")
        shared = Box(x, y, w, h, "shared memory", note)
        arrows.append((boxes[-1], shared, _loads(sass)))
        boxes.append(shared)
        into_registers = _shared_reads(sass)
    else:
        into_registers = _loads(sass)
    y += h + gap
    regs = Box(x, y, w, h, "registers" + (f": {inspected['registers']} per thread" if inspected else ""),
               _arithmetic(sass))
    arrows.append((boxes[-1], regs, into_registers))
    boxes.append(regs)
    y += h + gap
    c = Box(x, y, w, h, "global memory: C", "", "c")
    arrows.append((regs, c, _stores(sass)))
    boxes.append(c)
    for a, b in zip(boxes, boxes[1:], strict=False):
        if not any(a is u and b is v for u, v, _ in arrows):
            arrows.append((a, b, ""))
    return boxes, arrows


def notes(geometry: dict) -> list[str]:
    out = []
    if geometry["persistent"]:
        out.append("persistent grid: a block per SM walks the tiles")
    size = geometry["cluster"][0] * geometry["cluster"][1] * geometry["cluster"][2]
    if size > 1:
        out.append(f"clusters of {size} blocks")
    if geometry["when"]:
        out.append(f"runs when {geometry['when']}")
    return out


def svg(env, geometry: dict, inspected: dict | None, title: str) -> str:
    """The diagram of one launch (`geometry`: one entry of `facts.geometry`; `inspected`: its main
    kernel's inspect row, or None)."""
    rows, cols = geometry["tile"]
    picture = tile_picture(rows, cols, geometry["depth"] or 1, geometry["threads"])
    boxes, arrows = path_boxes(geometry, inspected)
    below, lines = max(picture["bottom"] + 40, boxes[-1].y + boxes[-1].h + 20), notes(geometry)
    return env.get_template("diagram.svg").render(
        width=WIDTH, height=below + 18 * len(lines), title=title, picture=picture, boxes=boxes,
        arrows=arrows, notes=lines, notes_y=below)


def program_svg(env, tile: tuple[int, int, int], title: str) -> str:
    """A Triton program's tile (no launch geometry: Triton chooses the threads)."""
    rows, cols, step = tile
    picture = tile_picture(rows, cols, step, None, "program")
    return env.get_template("diagram.svg").render(width=WIDTH // 2 + 40, height=picture["bottom"] + 40,
                                                  title=title, picture=picture, boxes=[], arrows=[],
                                                  notes=[], notes_y=0)
