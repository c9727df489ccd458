"""Strict settings for both console scripts: every source read on its own, every mistake one line naming it.

Each source (the TOML file, the prefixed environment variables, the flags) is validated alone before
they are merged, so an error names the source it is in: ``configuration file F: supervise.poll: ...``
or ``variable DUNSCAITH_SUPERVISE__POLL: ...``. Unknown tables, keys and variables are refused with the
nearest known name. Nothing here is a rule of the domain; the path rule is ``domain.model.user_paths``.
The value types of a setting (``Seconds``, ``UserPath``, ...) are ``adapters/kind_settings.py``'s, which each
program's composition root imports (a kind's package builds its own model from them too).
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tomllib
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

# the value types of a setting, every kind's too (a kind's package builds its own model from them)
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.plain_words import plain

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings

_MAX_CONFIG_BYTES = 1 << 20


def nearest(name: str, known: Iterable[str]) -> str | None:
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def read_toml(path: Path) -> dict[str, Any]:
    """The file's tables, {} when there is none; BadInput when it exists but cannot be read as TOML."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):  # a link to nothing: the defaults would be used without a word
            raise BadInput(f"configuration file {path} is a symbolic link to {os.readlink(path)}, which does not "
                           "exist: point it at your configuration, or remove it to use the defaults") from None
        return {}
    except NotADirectoryError:
        raise BadInput(f"configuration file {path} cannot be read: a folder above it is a file") from None
    except OSError as exc:
        raise BadInput(f"configuration file {path} cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(st.st_mode):
        raise BadInput(f"configuration file {path} is a directory, not a TOML file: move it aside")
    if not stat.S_ISREG(st.st_mode):
        raise BadInput(f"configuration file {path} is not a regular file")
    if st.st_size > _MAX_CONFIG_BYTES:
        raise BadInput(f"configuration file {path} is {st.st_size} bytes, more than a configuration can be")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BadInput(f"configuration file {path} cannot be read ({exc.strerror or exc})") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(f"configuration file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"configuration file {path} is not valid TOML: {exc}") from None


def model_at(model: type[BaseModel], loc: Sequence[str | int]) -> Any:
    """The model that holds the last name of ``loc``; None if it is not known."""
    current: Any = model
    for part in loc[:-1]:
        current = _field_model(current, str(part))
        if current is None:
            return None
    return current


def _field_model(model: Any, name: str) -> Any:
    """The model a name leads to: a sub-table, or (for a dict of tables) the model of its values."""
    if isinstance(model, _DictOf):
        return model.value
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    field = model.model_fields.get(name)
    if field is None:
        return None
    annotation = field.annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    args: tuple[Any, ...] = typing.get_args(annotation)
    if typing.get_origin(annotation) is dict and len(args) == 2:
        value = _unannotated(args[1])
        if isinstance(value, type) and issubclass(value, BaseModel):
            # a table validated by the model of its kind offers the keys of every kind
            every_key = getattr(value, "every_key", None)
            return _DictOf(every_key() if callable(every_key) else value)
    return None


def _unannotated(hint: Any) -> Any:
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint


class _DictOf:
    """A dict of tables (``[clusters.NAME]``): any key, each value of one model."""

    def __init__(self, value: type[BaseModel]) -> None:
        self.value = value


def first_error(exc: ValidationError, model: type[BaseModel], *, fields_only: bool) -> Any:
    """The error to report; with ``fields_only``, None when every error is about a whole table (a rule
    across keys, such as "postgresql needs records.url"), which one source alone cannot be blamed for."""
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        # a table given as another type (records = 5) is that source's own mistake, not a rule across keys:
        # refused even when another source gives keys under it (DUNSCAITH_RECORDS__ROOT would replace it)
        wrong_type = str(error["type"]).endswith("_type")
        whole_table = not loc or (error["type"] != "extra_forbidden" and not wrong_type and _is_table(model, loc))
        if not (fields_only and whole_table):
            return error
    return None


def _is_table(model: type[BaseModel], loc: Sequence[str]) -> bool:
    holder = model_at(model, loc)
    return holder is not None and _field_model(holder, loc[-1]) is not None


def source_of(loc: Sequence[str | int], values_by_source: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Of the sources (highest precedence first), the first that gives a value at or below ``loc``; when none
    does, the first that gives one at or below the nearest table above it. A variable setting one key of
    [records] says nothing of [records.postgresql], which the file alone may have given."""
    parts = [str(p) for p in loc]
    for end in range(len(parts), 0, -1):
        for name, values in values_by_source:
            if _value_at(values, parts[:end]) is not None:
                return name
    return values_by_source[-1][0] if values_by_source else "configuration"


def describe_error(first: Any, model: type[BaseModel], table_of: Mapping[str, Any]) -> str:
    """One error as one line: where (a.b.c), what, and for an unknown name the nearest known one."""
    loc = [str(p) for p in first["loc"]]
    if loc[-1:] == ["[key]"]:  # a table's key refused: the message names it, the table is where
        loc = loc[:-2]
    where = ".".join(loc) or "settings"
    if first["type"] == "extra_forbidden" and loc:
        return _unknown_name(loc, where, model, table_of)
    message = plain(first) + _hint(first)
    # a rule across keys names them itself (supervise.poll ... supervise.poll_max): not "supervise: supervise.poll"
    return message if message.startswith(f"{where}.") else f"{where}: {message}"


def _unknown_name(loc: list[str], where: str, model: type[BaseModel], table_of: Mapping[str, Any]) -> str:
    """An unknown table or key, with the nearest known name; a key of another kind of table, said as such."""
    holder = model_at(model, loc)
    known = list(holder.model_fields) if isinstance(holder, type) and issubclass(holder, BaseModel) else []
    value = _value_at(table_of, loc)
    suggestion = nearest(loc[-1], known)
    if isinstance(value, dict):
        hint = f" (did you mean [{'.'.join([*loc[:-1], suggestion])}]?)" if suggestion else ""
        return f"unknown table [{where}]{hint}"
    if suggestion == loc[-1]:  # a key of another kind of table ([clusters.NAME] of another adapter)
        table = _value_at(table_of, loc[:-1])
        kind = table.get("adapter") if isinstance(table, Mapping) else None
        return f"{where}: not a key of a table with adapter = {kind!r}" if kind else f"{where}: unknown key"
    hint = f" (did you mean {suggestion}?)" if suggestion else ""
    return f"{where}: unknown key{hint}"


def _hint(first: Any) -> str:
    """What follows pydantic's own words: the nearest allowed value, or that a quoted number is a string."""
    if first["type"] == "literal_error" and isinstance(first.get("input"), str):
        suggestion = nearest(first["input"], re.findall(r"'([^']*)'", str((first.get("ctx") or {}).get("expected"))))
        return f" (did you mean {suggestion}?)" if suggestion else ""
    if first["type"] in ("int_type", "float_type", "bool_type") and isinstance(first.get("input"), str):
        return " (a string in TOML: write the value without quotes)"  # strict: only a file's can be
    return ""


def _value_at(table: Mapping[str, Any], loc: Sequence[str]) -> Any:
    current: Any = table
    for part in loc:
        if not isinstance(current, Mapping) or part not in current:
            return None
        current = current[part]
    return current


def environment_values(settings_cls: type[BaseSettings], prefix: str) -> dict[str, Any]:
    """The prefixed variables as pydantic-settings reads them, nested; BadInput naming a variable that does
    not parse (a JSON value that is not JSON)."""
    # imported here: a remembered settings tree is read without pydantic-settings (settings_cache.settings_tree)
    from pydantic_settings import EnvSettingsSource, SettingsError

    try:
        return dict(EnvSettingsSource(settings_cls)())
    except SettingsError as exc:
        text = str(exc)
        field = text.split('"')[1] if text.count('"') >= 2 else ""
        variable = f"{prefix}{field.upper()}" if field else f"a {prefix}* variable"
        raise BadInput(f"variable {variable} does not parse: give the table as JSON, "
                       f"or set its keys one by one ({prefix}{field.upper()}__KEY=...)") from None


def variable_for(loc: Sequence[str | int], prefix: str, environ: Mapping[str, str]) -> str:
    """The variable that gave the value at ``loc``: the longest prefix of it that is set."""
    upper = {name.upper() for name in environ}
    parts = [str(p).upper() for p in loc]
    for end in range(len(parts), 0, -1):
        name = prefix + "__".join(parts[:end])
        if name in upper:
            return name
    below = sorted(name for name in upper if name.startswith(prefix + "__".join(parts) + "__"))
    return below[0] if below else f"{prefix}*"


def unknown_variables(prefix: str, environ: Mapping[str, str], model: type[BaseModel],
                      not_settings: Iterable[str], not_settings_prefixes: Iterable[str] = ()) -> None:
    """BadInput for the first prefixed variable that names no setting (a misspelling would pass silently)."""
    known = known_variables(prefix, model)
    open_tables: dict[str, set[str]] = {}
    for name in model.model_fields:
        sub = _field_model(model, name)
        if isinstance(sub, _DictOf):
            open_tables[prefix + name.upper()] = {key.upper() for key in sub.value.model_fields}
    extra = {n.upper() for n in not_settings}
    prefixes = tuple(p.upper() for p in not_settings_prefixes)
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(prefix) or upper in known or upper in extra or upper.startswith(prefixes):
            continue
        table = next((t for t in open_tables if upper.startswith(t + "__")), None)
        if table is not None:  # [clusters.NAME]: any NAME, then one of the table's keys (or the whole as JSON)
            rest = upper[len(table) + 2:].split("__", 1)
            if len(rest) == 1 or rest[1] in open_tables[table]:
                continue
            suggestion = nearest(rest[1], sorted(open_tables[table]))
            hint = f" (did you mean {table}__{rest[0]}__{suggestion}?)" if suggestion else ""
            raise BadInput(f"variable {name} names no setting{hint}; unset it")
        suggestion = nearest(upper, sorted(known))
        hint = f" (did you mean {suggestion}?)" if suggestion else ""
        raise BadInput(f"variable {name} names no setting{hint}; unset it")


def known_variables(prefix: str, model: type[BaseModel]) -> set[str]:
    """Every variable naming a setting or a table, sub-tables at any depth (``…RECORDS__POSTGRESQL__…``)."""
    names: set[str] = set()
    for name in model.model_fields:
        var = prefix + name.upper()
        names.add(var)
        sub = _field_model(model, name)
        if isinstance(sub, type) and issubclass(sub, BaseModel):
            names.update(known_variables(var + "__", sub))
    return names


def deep_merge(*tables: Mapping[str, Any]) -> dict[str, Any]:
    """Later tables win, key by key inside sub-tables (the precedence of the sources)."""
    merged: dict[str, Any] = {}
    for table in tables:
        for key, value in table.items():
            if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
                merged[key] = deep_merge(merged[key], value)
            else:
                merged[key] = value
    return merged


def documented_keys(model: type[BaseModel], dict_name: str = "NAME") -> set[str]:
    """Every key a file may hold, dotted (``supervise.poll``, ``clusters.NAME.adapter``): for the docs test."""
    keys: set[str] = set()

    def walk(current: Any, path: list[str]) -> None:
        for name in current.model_fields:
            sub = _field_model(current, name)
            if isinstance(sub, _DictOf):
                walk(sub.value, [*path, name, dict_name])
            elif sub is not None:
                walk(sub, [*path, name])
            else:
                keys.add(".".join([*path, name]))

    walk(model, [])
    return keys
