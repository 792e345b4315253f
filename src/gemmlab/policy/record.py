"""The tune record: what `gemmlab tune` tried on one GPU, per shape class, and the winners.

Schema (``"kind": "tune"``, ``"schema": 1``)::

    {"schema": 1, "kind": "tune", "date", "commit", "versions",
     "gpu": {"name", "slug", "sm_count", "compute_capability", …},
     "clocks_during_timing": {…ClockSampler.summary()…},
     "rungs": [names searched], "warmup", "tie_break",
     "classes": {CLASS_KEY: {"shape": [M, N, K], "iters", "seed", "cublas_ms",
                             "candidates": [{"rung", "launch", "knobs", "kernel", "verdict",
                                             "reason", "registers", "spills", "cubin",
                                             "median_ms", "ratio_vs_cublas"}, …],
                             "winner": {"rung", "launch", "knobs", "kernel", "cubin", "median_ms",
                                        "ratio_vs_cublas"} | null}}}

``cubin`` (absent from the earliest records) is a digest of the main kernel as compiled and
timed (`cubin_digest`): ptxas does not always build the same source the same
way, and `default.build_check` tells whether today's build is the one that was timed.

``verdict`` is ``rejected`` (did not compile, spilled, or its precondition does
not hold at the shape: no GPU time), ``failed`` (a wrong result, or it raised),
or ``timed``. Dispatch reads only ``gpu.sm_count`` and each class's
``winner``: (rung, launch, knobs), rebuilt with the rung's `Space`.

``launch`` is the launch's name within its rung (`gemmlab.launches`: "b-padded",
"vec4", …). Records made before launches had names hold its position instead;
`load` reads those through `LEGACY_LAUNCHES`, the order the rungs' launches had
then, so an old record keeps its meaning whatever order the launches take later.
Likewise records made before the sizes had their present names (``small-tiled`` for
``one-wave-tiled``): `load` reads their class keys through `classes.FORMER_SIZES`
(`current_classes`), so such a record dispatches as one written today.

`gemmlab tune` writes records under ``results/tune/GPU/``; ``--install`` also
copies one to ``INSTALLED/GPU.json`` (package data), which is what `default`
reads on that GPU.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import jsonfile
from ..exits import UsageError
from ..measure.device import slug
from .classes import BY_KEY, current_key

SCHEMA = 1
KIND = "tune"
#: Installed records, one per GPU, shipped with the package: what `default` dispatches by.
INSTALLED = Path(__file__).resolve().parent.parent / "tuned"
#: The GPU whose record `default` uses where there is no GPU (explain, export, inspect on a laptop):
#: the one LeetGPU's timings and this lab's records are about.
TARGET = "nvidia-h200"
VERDICTS = ("rejected", "failed", "timed")
TIE_BREAK = ("lowest median time; equal medians: the candidate tried first (rungs in the order "
             "named, each launch's current knobs first, then the space's product order)")


#: The tunable rungs' launches in the order they had when records named a launch by its position
#: (the earliest records, the committed H200 record among them). Frozen: it says
#: what those records meant, whatever order the launches take now.
LEGACY_LAUNCHES = {
    "bigtile": ("b-in-place", "b-padded"),
    "splitk": ("b-in-place", "b-padded"),
    "tma": ("b-in-place", "b-padded"),
    "small": ("vec4", "any"),
    "warptile": ("whole-tiles", "vec4", "padded"),
    "float4": ("whole-tiles", "vec4", "any"),
}


class RecordError(UsageError):
    """A tune record that is not one; the message is one line. A usage error (exit 2): the record
    is one a user named (GEMMLAB_TUNE_RECORD, --calibrate), or an installed one a user edited."""


def installed_path(gpu_slug: str) -> Path:
    return INSTALLED / f"{gpu_slug}.json"


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise RecordError(f"{where}: {what}")


def validate(record: object, where: str = "tune record") -> dict:
    """The record itself if it is a well-formed tune record; RecordError saying what is wrong."""
    _need(isinstance(record, dict), where, "not a JSON object")
    assert isinstance(record, dict)
    _need(record.get("kind") == KIND and record.get("schema") == SCHEMA, where,
          f"not a tune record of schema {SCHEMA} (kind {record.get('kind')!r}, "
          f"schema {record.get('schema')!r})")
    gpu = record.get("gpu")
    _need(isinstance(gpu, dict) and isinstance(gpu.get("name"), str)
          and isinstance(gpu.get("sm_count"), int) and gpu["sm_count"] > 0, where,
          "gpu needs a name and a positive sm_count")
    classes = record.get("classes")
    _need(isinstance(classes, dict), where, "classes must be an object")
    for key, entry in classes.items():
        _need(key in BY_KEY, where, f"unknown shape class {key!r}; known: {', '.join(BY_KEY)}")
        _need(isinstance(entry, dict) and isinstance(entry.get("candidates"), list), where,
              f"class {key} needs a candidates list")
        for cand in entry["candidates"]:
            _need(isinstance(cand, dict) and cand.get("verdict") in VERDICTS, where,
                  f"class {key}: a candidate's verdict must be one of {', '.join(VERDICTS)}")
        winner = entry.get("winner")
        if winner is not None:
            _need(isinstance(winner, dict) and isinstance(winner.get("rung"), str)
                  and _is_launch(winner.get("launch")) and isinstance(winner.get("knobs"), dict)
                  and all(isinstance(v, int) for v in winner["knobs"].values()), where,
                  f"class {key}: the winner needs rung, launch (a name) and knobs (integers)")
    from .preludes import PRELUDES

    leading = record.get("preludes", {})
    _need(isinstance(leading, dict), where, "preludes must be an object")
    for rung, entry in leading.items():
        _need(rung in PRELUDES, where, f"unknown prelude {rung!r}; known: {', '.join(PRELUDES)}")
        _need(isinstance(entry, dict) and isinstance(entry.get("outputs"), int) and entry["outputs"] > 0,
              where, f"prelude {rung} needs outputs, a positive integer (the floor on M·K)")
        _need(isinstance(entry.get("reduction", 1), int) and entry.get("reduction", 1) > 0, where,
              f"prelude {rung}: reduction, where given, is a positive integer (the longest N)")
    return record


def _is_launch(value: object) -> bool:
    """A launch's name, or (a record made before names) its position."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def named_launches(record: dict, where: str = "tune record") -> dict:
    """`record` with every launch position (an older record's) replaced by the launch's name,
    read through `LEGACY_LAUNCHES`; RecordError for a position that table does not know."""
    for key, entry in record["classes"].items():
        for item in [*entry["candidates"], entry.get("winner")]:
            if not item or not isinstance(item.get("launch"), int):
                continue
            order = LEGACY_LAUNCHES.get(item.get("rung"), ())
            _need(0 <= item["launch"] < len(order), where,
                  f"class {key}: {item.get('rung')} launch {item['launch']} predates launch names and "
                  f"is not among the positions gemmlab knows ({', '.join(order) or 'none'})")
            item["launch"] = order[item["launch"]]
    return record


#: The fields of a class's entry (or of its calibration entry) whose value names another class.
CLASS_FIELDS = ("inherited", "followed")


def current_classes(record: object, where: str = "tune record") -> object:
    """`record` with each class key a former size name spells (`classes.FORMER_KEYS`) as it is named
    today: the keys of ``classes`` and of ``calibration.classes``, and the class an entry names
    (`CLASS_FIELDS`); their order kept. RecordError where a record holds one class under both names;
    what is not a record is left as it is, for `validate` to refuse."""
    if not isinstance(record, dict):
        return record
    calibration = record.get("calibration")
    for section in (record.get("classes"), calibration.get("classes") if isinstance(calibration, dict) else None):
        if not isinstance(section, dict):
            continue
        written: dict[str, str] = {}
        for key in section:
            new = current_key(key)
            _need(new not in written, where, f"class {new} is in the record twice, as {written.get(new)} and {key}")
            written[new] = key
        renamed = {new: section[key] for new, key in written.items()}
        for entry in renamed.values():
            for field in CLASS_FIELDS:
                if isinstance(entry, dict) and isinstance(entry.get(field), str):
                    entry[field] = current_key(entry[field])
        section.clear()
        section.update(renamed)
    return record


def cubin_digest(cubin: bytes) -> str:
    """What identifies a build: the same source and macros did not always compile to the same SASS
    on the H200's machine (bigtile.md, "the build is a lottery"), so a record says which build
    it timed."""
    return hashlib.sha256(cubin).hexdigest()[:16]


def load(path: Path) -> dict:
    try:
        data = jsonfile.read(path)
    except (OSError, UnicodeDecodeError, EOFError) as exc:  # EOFError: a truncated .gz
        raise RecordError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path} is not JSON: {exc}") from None
    return named_launches(validate(current_classes(data, str(path)), str(path)), str(path))


def dumps(record: dict) -> str:
    return json.dumps(record, indent=1, sort_keys=False) + "\n"


def save(record: dict, root: Path) -> Path:
    """ROOT/tune/GPU/DATE.json (validated first; DATE-2.json where a run of the same second has it)."""
    validate(record)
    stamp = record["date"].replace(":", "").replace("+00:00", "Z")
    return jsonfile.write(Path(root) / "tune" / record["gpu"]["slug"] / f"{stamp}.json", dumps(record),
                          keep_existing=True)


def install(record: dict, folder: Path = INSTALLED) -> Path:
    """Make `record` the one `default` reads on its GPU: FOLDER/GPU.json, replaced whole."""
    validate(record)
    return jsonfile.write(Path(folder) / f"{record['gpu']['slug']}.json", dumps(record))


def find(gpu_name: str | None, sm_count: int | None, folder: Path = INSTALLED,
         capability: str | None = None) -> tuple[dict | None, str]:
    """The installed record `default` dispatches by on this GPU (None without a GPU: the TARGET's),
    and why, in words.

    A GPU's own record is the one its slug names, measured on its SM count (the class bounds are
    in SMs). A GPU without one borrows a sibling's: a record of the same compute capability and
    SM count (the H100 SXM and the H200 are both sm_90 with 132 SMs), the TARGET's first, and says
    so. None where no record matches. A malformed installed record raises RecordError: a bug to ship.
    """
    gpu_slug = slug(gpu_name) if gpu_name else TARGET
    path = Path(folder) / f"{gpu_slug}.json"
    own_why = f"no tune record for {gpu_name or TARGET} ({path.name})"
    if path.is_file():
        record = load(path)
        if sm_count is None or record["gpu"]["sm_count"] == sm_count:
            where = "this GPU" if gpu_name else f"{record['gpu']['name']}, the target (no GPU here)"
            return record, f"{path.name} ({where}; tuned {record.get('date', '?')})"
        own_why = f"{path.name} was measured on {record['gpu']['sm_count']} SMs, this GPU has {sm_count}"
    sibling = _sibling(folder, capability, sm_count, exclude=path)
    if sibling is None:
        return None, own_why
    record, other = sibling
    return record, (f"{other.name}, borrowed: {gpu_name} has no record of its own, and "
                    f"{record['gpu']['name']} has its architecture (sm_{capability.replace('.', '')}) "
                    f"and {sm_count} SMs (tuned {record.get('date', '?')})")


def _sibling(folder: Path, capability: str | None, sm_count: int | None,
             exclude: Path) -> tuple[dict, Path] | None:
    """An installed record of another GPU with this compute capability and SM count: the TARGET's
    if it is one, else the first by file name."""
    if capability is None or sm_count is None:
        return None
    paths = sorted(Path(folder).glob("*.json"), key=lambda p: (p.stem != TARGET, p.name))
    for other in paths:
        if other == exclude:
            continue
        record = load(other)
        if (record["gpu"].get("compute_capability") == capability
                and record["gpu"]["sm_count"] == sm_count):
            return record, other
    return None


def is_own(record: dict | None, gpu_name: str | None) -> bool:
    """Whether `record` was measured on this GPU (by name); True without a GPU (nothing to tune)."""
    return gpu_name is None or (record is not None and record["gpu"].get("slug", slug(record["gpu"]["name"]))
                                == slug(gpu_name))
