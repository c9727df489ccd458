"""One strict way to read a JSON object: every field present, none extra, each of its type.

Control files and records are read by this project only; a file that does not match exactly is
someone else's, or damaged, and is refused rather than half-understood.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

TYPE_CHECKING = False  # ``typing`` (~3.5 ms) is not imported on the wrapper's path: a control file's writer
if TYPE_CHECKING:
    from typing import Any


class DecodeError(ValueError):
    """The text is not exactly the object expected; the message says what is wrong."""


# A field spec maps each name to the accepted Python types (bool is never accepted for int).
FieldSpec = Mapping[str, tuple[type, ...]]


def dataclass_spec(cls: type[Any]) -> FieldSpec:
    """The field spec of a dataclass as JSON carries it: one entry per field, in declaration order.

    A NewType is its base type, ``X | None`` accepts both, a tuple arrives as a JSON list.
    """
    import dataclasses  # here: a control file's reader (the wrapper's path) needs none of it
    import typing

    hints = typing.get_type_hints(cls)
    return {f.name: _accepted(hints[f.name]) for f in dataclasses.fields(cls)}


def _accepted(hint: Any) -> tuple[type, ...]:
    import typing
    from types import UnionType

    while hasattr(hint, "__supertype__"):  # a NewType
        hint = hint.__supertype__
    if isinstance(hint, UnionType) or typing.get_origin(hint) is typing.Union:
        return tuple(t for arg in typing.get_args(hint) for t in _accepted(arg))
    if typing.get_origin(hint) in (tuple, list):
        return (list,)
    if not isinstance(hint, type):
        raise TypeError(f"no JSON type for the field type {hint!r}")
    return (hint,)


# Deep enough for any answer a site gives or any file of ours; far below the interpreter's recursion limit.
MAX_DEPTH = 64
_STRING_OR_BRACKET = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def loads_bounded(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses nesting deeper than ``max_depth`` (DecodeError), never a RecursionError.

    The depth is counted before parsing, skipping strings, so a body of 200,000 brackets costs one
    regular-expression pass and no recursion.
    """
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(data):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                raise DecodeError(f"not JSON this program reads: nested deeper than {max_depth}")
        elif token in (b"]", b"}"):
            depth -= 1
    try:
        return json.loads(text)
    except RecursionError:  # the count above missed a form (an encoding it cannot see): still one error
        raise DecodeError(f"not JSON this program reads: nested deeper than {max_depth}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DecodeError(f"not JSON: {exc}") from None


def loads_object(text: str | bytes) -> dict[str, Any]:
    value = loads_bounded(text)
    if not isinstance(value, dict):
        raise DecodeError(f"expected a JSON object, found {type(value).__name__}")
    return value


def check_fields(obj: Mapping[str, Any], spec: FieldSpec, what: str) -> None:
    if obj.keys() != spec.keys():  # records are read whole on every status: the usual case costs no sets
        missing = sorted(set(spec) - set(obj))
        extra = sorted(set(obj) - set(spec))
        if missing:
            raise DecodeError(f"{what}: missing field(s) {', '.join(missing)}")
        if extra:
            raise DecodeError(f"{what}: unexpected field(s) {', '.join(extra)}")
    for name, types in spec.items():
        value = obj[name]
        if isinstance(value, bool) and bool not in types:
            raise DecodeError(f"{what}: field {name} has the wrong type (bool)")
        if not isinstance(value, types):
            raise DecodeError(f"{what}: field {name} has the wrong type ({type(value).__name__})")


def decode_exact(text: str | bytes, spec: FieldSpec, what: str) -> dict[str, Any]:
    obj = loads_object(text)
    check_fields(obj, spec, what)
    return obj


def dumps_canonical(obj: Mapping[str, Any]) -> bytes:
    """The one encoding written: sorted keys, compact, UTF-8, newline-terminated."""
    return (json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
