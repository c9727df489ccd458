"""A validation error of pydantic (the settings, and typer's own parsing of options) in plain words.

pydantic says "Input should be a valid integer, unable to parse string as an integer"; a user needs
"must be a whole number, not 'x'". Only the error's type and its context are read (never pydantic
itself, so the console scripts' lean paths import nothing for this); a type not known here keeps
pydantic's own words, which are still one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dunscaith.domain.model.shown import shown

_KINDS = {
    "int_parsing": "a whole number", "int_type": "a whole number", "int_from_float": "a whole number",
    "int_parsing_size": "a whole number of a usable size", "float_parsing": "a number", "float_type": "a number",
    "finite_number": "a finite number", "bool_parsing": "true or false", "bool_type": "true or false",
    "string_type": "text (a string in quotes)", "list_type": "a list ([\"a\", \"b\"])", "tuple_type": "a list",
    "set_type": "a list", "dict_type": "a table", "model_type": "a table", "model_attributes_type": "a table",
    "path_type": "a path", "none_required": "left out", "datetime_parsing": "a date and time",
    "datetime_type": "a date and time", "date_parsing": "a date", "enum": "one of the names listed",
}
_BOUNDS = {"greater_than": ("more than", "gt"), "greater_than_equal": ("at least", "ge"),
           "less_than": ("less than", "lt"), "less_than_equal": ("at most", "le"),
           "too_short": ("at least {} long", "min_length"),
           "string_too_short": ("at least {} characters", "min_length"),
           "too_long": ("at most {} long", "max_length"), "string_too_long": ("at most {} characters", "max_length")}


def given(value: Any) -> str:
    """The value as it was given, for the message: text quoted and escaped, anything else as TOML shows it."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        return "a list"
    return shown(str(value)).strip("'")


def plain(error: Mapping[str, Any]) -> str:
    """One error (``ValidationError.errors()[n]``) as "must be ..., not ..." (no location: the caller adds it)."""
    kind = str(error.get("type", ""))
    ctx = error.get("ctx") or {}
    value = error.get("input")
    if kind in ("value_error", "assertion_error"):
        return str(error.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind == "missing":
        return "is required"
    if kind == "literal_error":
        return f"must be {ctx.get('expected', 'one of the values listed')}, not {given(value)}"
    if kind in _BOUNDS:
        words, key = _BOUNDS[kind]
        bound = ctx.get(key)
        bound = f"{bound:g}" if isinstance(bound, float) else bound
        return f"must be {words.format(bound) if '{}' in words else f'{words} {bound}'}, not {given(value)}"
    if kind in _KINDS:
        return f"must be {_KINDS[kind]}, not {given(value)}"
    return str(error.get("msg", kind))
