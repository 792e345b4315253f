"""What the judge and the solution's process say to each other, and how strictly it is read.

The channel is a Unix socket of its own (SOCK_SEQPACKET), never stdout: what
the solution prints is its output, shown as such, and parsed by nobody. Both
directions carry one JSON object per packet.

Parent → child is trusted (the judge wrote it): the first message (the
arena's handle, before the solution is imported) is JSON; every request after
it is a fixed binary record (`REQUEST`), which the child decodes with a C
function, so no Python the solution could replace runs between a request's
arrival and its call. Child → parent is not trusted: the solution's code runs
in that process and can write anything to the socket. So each message is
capped in size, decoded strictly, and must be one of a few exact shapes;
anything else is a `ProtocolViolation`, which the judge turns into a verdict.
Nothing from the child is ever unpickled, and the only figure it supplies is
its own timing, which the judge checks against its own clock.
"""

from __future__ import annotations

import json
import math
import struct

#: Longest message the child may send (bytes).
MAX_LINE = 16 * 1024
#: Longest text (an error message) a child's message may carry.
MAX_TEXT = 4000

#: The largest integer a child's message may carry.
MAX_WORD = 2**31 - 1

#: Each kind of child message and its fields with their types. `returned` also says whether C's
#: tensor object is the one the harness passed (0, 1: its storage replaced, 2: changed in place),
#: and the bytes of L2 the solution set aside for persisting accesses and its stream's window.
CHILD_MESSAGES: dict[str, dict[str, type]] = {
    "started": {},  # the harness is up (torch imported), the solution not yet loaded
    "ready": {},
    "load_error": {"message": str},
    "returned": {"seq": int, "ms": float, "c_object": int, "l2_persisting": int, "l2_window": int},
    "raised": {"seq": int, "error": str},
}

#: A request: op, seq, null (skip solve), M, N, K, then the offsets of A, B, C and S (floats).
REQUEST = struct.Struct("<10q")
OP_CALL, OP_EXIT = 1, 2


def encode_request(seq: int, null: bool, shape, offsets) -> bytes:
    return REQUEST.pack(OP_CALL, seq, int(null), *shape, *offsets)


def encode_exit() -> bytes:
    return REQUEST.pack(OP_EXIT, *([0] * 9))


class ProtocolViolation(Exception):
    """The solution's process sent something the judge never asks for."""


def encode(message: dict) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _field_ok(value: object, kind: type) -> bool:
    if kind is int:
        return type(value) is int and 0 <= value <= MAX_WORD
    if kind is float:
        return type(value) in (int, float) and math.isfinite(value) and 0 <= value < 1e9
    return type(value) is str and len(value) <= MAX_TEXT


def parse_child_line(line: bytes) -> dict:
    """One line from the child as a validated message, or `ProtocolViolation`."""
    if len(line) > MAX_LINE:
        raise ProtocolViolation(f"a message of {len(line)} bytes (the limit is {MAX_LINE})")
    try:
        message = json.loads(line.decode("utf-8", errors="strict"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ProtocolViolation(f"a malformed message: {printable(repr(line[:80]), 120)}") from None
    if not isinstance(message, dict) or message.get("kind") not in CHILD_MESSAGES:
        raise ProtocolViolation(f"an unknown message: {printable(repr(line[:80]), 120)}")
    fields = CHILD_MESSAGES[message["kind"]]
    if set(message) != {"kind", *fields} or not all(_field_ok(message[k], t) for k, t in fields.items()):
        raise ProtocolViolation(f"a message of kind {message['kind']!r} with wrong fields")
    return message


def printable(text: str, limit: int = MAX_TEXT) -> str:
    """Text safe to show on a terminal: control characters (escapes, bells) made visible, length capped."""
    out = []
    for ch in text[:limit]:
        if ch in "\n\t" or (ch.isprintable() and ch != "\x7f"):
            out.append(ch)
        else:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
    if len(text) > limit:
        out.append(f"… ({len(text) - limit} more characters)")
    return "".join(out)
