"""The code of the dataclasses' generated methods, remembered between commands (the CLI's start-up).

Every frozen dataclass of the domain gets its ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` from ``dataclasses``, which writes each one's source text and compiles
it (``exec`` of a string) when the class is defined: ~700 compilations, most of a read command's import of
the jobs domain (docs/architecture.md, "The front doors", with the figures). The front door installs this
cache first: ``dataclasses``' ``exec`` of a source text runs that text's code object, compiled once and kept
in the user's cache folder (``$XDG_CACHE_HOME/dunscaith/dataclass-code.marshal``); a text not kept yet is
compiled as ``dataclasses`` would compile it, and the file is written again when the command ends.

What runs is exactly what ``dataclasses`` would run: the key is the whole source text, its code is what
``compile`` makes of it with the flags ``dataclasses``' own ``exec`` has (none: that module has no future
import), and the file is read only when it was written by this very Python (``sys.version``), is the
user's own, is not open to others' writing, and holds only texts and code objects. Anything else (no
home, an unsafe or damaged file, a full disk) costs only the time: the classes are compiled as before.
"""

from __future__ import annotations

import builtins
import marshal
import sys
from collections.abc import Mapping
from pathlib import Path
from types import CodeType
from typing import Any

FILE = "dataclass-code.marshal"
LIMIT = 8 * 1024 * 1024  # bytes read at most (~1 MB holds every dataclass of dunscaith)
MOST = 5000  # texts kept at most: a cache grown past it (many builds over time) starts again

_kept: dict[str, CodeType] = {}
_added = 0  # texts compiled in this process, not in the file yet
_file: Path | None = None


def _exec(source: Any, globals_: dict[str, Any] | None = None, locals_: Mapping[str, Any] | None = None) -> None:
    """``exec`` as ``dataclasses`` calls it, a source text's code compiled once and kept."""
    global _added
    if isinstance(source, str):
        code = _kept.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)  # as dataclasses' exec compiles it
            _kept[source] = code
            _added += 1
        source = code
    if globals_ is None:  # dataclasses' exec would run in its own module's globals
        import dataclasses

        globals_ = vars(dataclasses)
    builtins.exec(source, globals_, locals_)


def install(env: Mapping[str, str] | None = None) -> None:
    """Read the kept code, and have ``dataclasses`` run it: before the first dataclass is defined."""
    global _file
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec:
        return
    try:
        from dunscaith.adapters.durable.config_dir import cache_home

        _file = cache_home(env) / "dunscaith" / FILE
        _kept.update(_read(_file))
    except Exception:  # a cache never stops a command: the classes are compiled as before
        _kept.clear()
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # its module global, ahead of the builtin


def uninstall() -> None:
    """``dataclasses`` compiles again (tests)."""
    global _added, _file
    import dataclasses

    if getattr(dataclasses, "exec", None) is _exec:
        del dataclasses.exec  # type: ignore[attr-defined]
    _kept.clear()
    _added, _file = 0, None


def _read(path: Path) -> dict[str, CodeType]:
    from dunscaith.adapters.durable.private_read import read_private

    try:
        body = read_private(path, LIMIT, closed_to_others=True)
    except FileNotFoundError:
        return {}
    found = marshal.loads(body)
    if not (isinstance(found, tuple) and len(found) == 2 and found[0] == sys.version and isinstance(found[1], dict)):
        return {}
    kept: dict[str, CodeType] = found[1]
    if not all(isinstance(text, str) and isinstance(code, CodeType) for text, code in kept.items()):
        return {}
    return kept


def save() -> None:
    """Write the kept code again when this command compiled texts the file did not hold (silently: a
    cache that cannot be written costs only the next command's time)."""
    global _added
    if not _added or _file is None or sys.dont_write_bytecode:
        return
    try:
        from dunscaith.adapters.durable.private_dir import ensure_private_dir, make_missing_dirs
        from dunscaith.adapters.durable.publish import replace

        body = marshal.dumps((sys.version, _kept if len(_kept) <= MOST else {}))
        make_missing_dirs(_file.parent.parent)  # ~/.cache: made if missing (never the home), never changed
        replace(ensure_private_dir(_file.parent), _file.name, body, durable_name=False)
        _added = 0
    except Exception:  # a cache never stops a command
        pass


def kept() -> int:
    """How many texts are kept (tests)."""
    return len(_kept)


def compiled_here() -> int:
    """How many texts this process compiled itself (tests)."""
    return _added
