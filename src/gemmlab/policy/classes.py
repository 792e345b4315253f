"""Shape classes: the one definition of which calls `default` treats alike, and of their bounds.

A class is a size and a layout (policy/default.md says each in words, with examples):

* **size**: ``micro`` where M·N·K ≤ 2²² per SM, and ≤ 2²¹ per SM where the outputs M·K pass a
  quarter of a wave: a call that is latency (launches, pre-passes, one chain of reduction steps),
  where one launch without a pre-pass (`small`) leads; with many outputs and more work the 128-tile
  builds lead (kernels/cuda/small.md, experiments/README.md#random-shapes). Above micro, by the
  outputs against one wave of 128×128 tiles (SMs × 128²): ``quarter-wave`` up to a quarter of a
  wave, ``one-wave`` up to one, ``few-waves`` up to four, ``many-waves`` beyond. Each name says
  the outputs' bound, and none is a rung's or a launch's (tests/test_records.py proves it), so a
  record's "one-wave-tiled → splitk" reads as a class and the rung that won it.
* **layout**: ``tiled`` when M % 128, N % 32 and K % 128 are 0 (every whole-tile fast path holds),
  else ``aligned`` when N % 4 and K % 4 are 0 (the float4 paths), ``odd-n`` where only N is not
  (A's rows start anywhere), ``odd`` where K is not (B's and C's rows start anywhere). The odd
  layouts are two because different builds win them (kernels/cuda/bigtile_warp.md).

Records made before the sizes had these names (issue 53) call them ``tiny``, ``small``,
``medium`` and ``large``: `FORMER_SIZES` is the one table of those, and `current_key` reads such a
record's class keys as today's (`record.load` does, so an old record dispatches as it did).

`InClass` is a launch precondition in the style of `When` (`str()` in words, `cpp()` in C++
for `gemmlab export`); its SM count is the tune record's, so it decides from M, N and K alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import problem

#: The tile whose waves measure size.
WAVE_TILE = 128
#: The work (M·N·K) per SM up to which a call is `micro`.
MICRO_WORK_PER_SM = 1 << 22
#: The work per SM above which a `micro` call also needs outputs within quarter-wave's bound.
MICRO_WIDE_WORK_PER_SM = 1 << 21
#: Above micro's work, the sizes by outputs M·K in waves, each but the last with its bound.
OUTPUT_SIZES: tuple[tuple[str, float | None], ...] = (("quarter-wave", 0.25), ("one-wave", 1),
                                                       ("few-waves", 4), ("many-waves", None))
SIZES: tuple[str, ...] = ("micro", *(name for name, _ in OUTPUT_SIZES))
#: The multiples of M, N, K that make a shape "tiled".
TILED = (128, 32, 128)
LAYOUTS = ("tiled", "aligned", "odd-n", "odd")


@dataclass(frozen=True, order=True)
class ShapeClass:
    size: str
    layout: str

    @property
    def key(self) -> str:
        return f"{self.size}-{self.layout}"

    def __str__(self) -> str:
        return self.key


#: Every class, in the order records, tables and dispatch list them.
CLASSES: tuple[ShapeClass, ...] = tuple(ShapeClass(s, lay) for lay in LAYOUTS for s in SIZES)
BY_KEY = {c.key: c for c in CLASSES}

#: The sizes' names before issue 53 (``small`` was also a rung's, so a record read rung to rung),
#: each with today's name of the same bounds. Frozen: it says what records made then meant.
FORMER_SIZES = {"tiny": "quarter-wave", "small": "one-wave", "medium": "few-waves", "large": "many-waves"}
#: Each class key such a record holds, and the key of the same class today.
FORMER_KEYS = {ShapeClass(old, lay).key: ShapeClass(new, lay).key
               for old, new in FORMER_SIZES.items() for lay in LAYOUTS}


def current_key(key: str) -> str:
    """A class key as it is named today: a former name's (`FORMER_KEYS`) translated, any other as it is."""
    return FORMER_KEYS.get(key, key)


def wave_outputs(sms: int) -> int:
    """Outputs of C one wave of 128×128 tiles covers on `sms` SMs."""
    return sms * WAVE_TILE * WAVE_TILE


def micro_work(sms: int) -> int:
    """The most work (M·N·K) a `micro` call has on `sms` SMs."""
    return MICRO_WORK_PER_SM * sms


def micro_outputs(sms: int) -> int:
    """The most outputs (M·K) a `micro` call has where its work is over MICRO_WIDE_WORK_PER_SM."""
    return int(OUTPUT_SIZES[0][1] * wave_outputs(sms))


def is_micro(m: int, n: int, k: int, sms: int) -> bool:
    work = m * n * k
    return work <= micro_work(sms) and (work <= MICRO_WIDE_WORK_PER_SM * sms or m * k <= micro_outputs(sms))


def size_of(m: int, n: int, k: int, sms: int) -> str:
    if is_micro(m, n, k, sms):
        return "micro"
    outputs = m * k
    for name, waves in OUTPUT_SIZES:
        if waves is None or outputs <= waves * wave_outputs(sms):
            return name
    raise AssertionError("the last size is unbounded")


def layout_of(m: int, n: int, k: int) -> str:
    tm, tn, tk = TILED
    if m % tm == 0 and n % tn == 0 and k % tk == 0:
        return "tiled"
    if k % 4:
        return "odd"
    return "odd-n" if n % 4 else "aligned"


def classify(m: int, n: int, k: int, sms: int) -> ShapeClass:
    return ShapeClass(size_of(m, n, k, sms), layout_of(m, n, k))


def _size_bounds(size: str, sms: int) -> tuple[int, int | None]:
    """(exclusive lower, inclusive upper) bound of M·K for a size above micro; None: unbounded."""
    lower = 0
    for name, waves in OUTPUT_SIZES:
        upper = None if waves is None else int(waves * wave_outputs(sms))
        if name == size:
            return lower, upper
        lower = upper or 0
    raise KeyError(size)


def fewest_rows(cls: ShapeClass, sms: int) -> int:
    """The least M of a legal shape (K ≤ problem.MAX_DIM) in `cls`: above micro, its outputs' floor
    over the widest K."""
    if cls.size == "micro":
        return problem.MIN_DIM
    lower, _ = _size_bounds(cls.size, sms)
    return lower // problem.MAX_DIM + 1


@dataclass(frozen=True)
class InClass:
    """The call's shape is in `cls` on a GPU of `sms` SMs (see the module's docstring)."""

    cls: ShapeClass
    sms: int

    def __call__(self, a, b, c, m: int, n: int, k: int) -> bool:
        return classify(m, n, k, self.sms) == self.cls

    def __str__(self) -> str:
        work, wide, few = micro_work(self.sms), MICRO_WIDE_WORK_PER_SM * self.sms, micro_outputs(self.sms)
        if self.cls.size == "micro":
            size = f"M·N·K ≤ {work}, and M·N·K ≤ {wide} or M·K ≤ {few}"
        else:
            lower, upper = _size_bounds(self.cls.size, self.sms)
            outputs = (f"M·K > {lower}" if upper is None
                       else f"{lower} < M·K ≤ {upper}" if lower else f"M·K ≤ {upper}")
            size = f"M·N·K > {work}, or M·N·K > {wide} and M·K > {few}; {outputs}"
        tm, tn, tk = TILED
        layout = {"tiled": f"M % {tm} == 0, N % {tn} == 0, K % {tk} == 0",
                  "aligned": f"N % 4 == 0, K % 4 == 0, not (M % {tm}, N % {tn}, K % {tk} all 0)",
                  "odd-n": "N % 4 != 0, K % 4 == 0", "odd": "K % 4 != 0"}[self.cls.layout]
        return f"shape class {self.cls.key} on {self.sms} SMs ({size}; {layout})"

    def cpp(self) -> str:
        mnk, mk = "(long long)M * N * K", "(long long)M * K"
        work, wide, few = micro_work(self.sms), MICRO_WIDE_WORK_PER_SM * self.sms, micro_outputs(self.sms)
        micro = f"({mnk} <= {work}LL && ({mnk} <= {wide}LL || {mk} <= {few}LL))"
        if self.cls.size == "micro":
            parts = [micro]
        else:
            lower, upper = _size_bounds(self.cls.size, self.sms)
            parts = ([f"!{micro}"] + ([f"{mk} > {lower}LL"] if lower else [])
                     + ([f"{mk} <= {upper}LL"] if upper is not None else []))
        tm, tn, tk = TILED
        tiled = f"(M % {tm} == 0 && N % {tn} == 0 && K % {tk} == 0)"
        vec4 = "(N % 4 == 0 && K % 4 == 0)"
        parts.append({"tiled": tiled, "aligned": f"{vec4} && !{tiled}", "odd-n": "(N % 4 != 0 && K % 4 == 0)",
                      "odd": "(K % 4 != 0)"}[self.cls.layout])
        return " && ".join(parts)


def representatives() -> dict[ShapeClass, tuple[int, int, int]]:
    """One shape per class when `gemmlab tune` is given none: the sweep's shapes and their odd variants
    (M−1 aligned, M−1 and N−1 odd-n, all three odd); micro's and quarter-wave's over a long reduction.
    Each falls in its class on any GPU of 100 to 160 SMs."""
    tiled = {"micro": (256, 1024, 256), "quarter-wave": (512, 4096, 512), "one-wave": (1024, 1024, 1024),
             "few-waves": (2048, 2048, 2048), "many-waves": problem.PERF_SHAPE}
    less = {"tiled": (0, 0, 0), "aligned": (1, 0, 0), "odd-n": (1, 1, 0), "odd": (1, 1, 1)}
    return {ShapeClass(size, layout): tuple(x - d for x, d in zip(tiled[size], less[layout], strict=True))
            for layout in LAYOUTS for size in SIZES}
