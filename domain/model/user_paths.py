"""One rule for every path a user gives (record root, records folder, config file, manifest, record).

``~`` and ``$VAR`` / ``${VAR}`` are expanded, as a shell would have done had the value been typed
unquoted; what is left must be an absolute path. An empty value or a relative one is refused: a
relative root follows the current directory, so records would seem to vanish after a ``cd``, and an
empty one would make the current directory the root. Pure: the environment and the home directory
are passed in.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from dunscaith.domain.model.shown import shown

_CONTROL = re.compile(r"[\x01-\x1f\x7f]")
_VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")


class UserPathRefused(ValueError):
    """The path cannot be used as given; the message says why and what to give instead."""


def expand_user_path(raw: str, env: Mapping[str, str], home: str) -> str:
    """``raw`` with ``~`` and ``$VAR`` expanded and normalised; UserPathRefused if it is not absolute."""
    if "\x00" in raw:
        raise UserPathRefused("contains a NUL character")
    if _CONTROL.search(raw):  # a newline in a folder's name breaks every line that shows it, and is a typo
        raise UserPathRefused(f"{shown(raw)} contains a control character (a newline, a tab...): give the "
                              "path without it")
    if not raw.strip():
        raise UserPathRefused("is empty: give an absolute path")
    text = _expand_variables(raw, env)
    if text == "~" or text.startswith("~/"):
        if not home or not home.startswith("/"):
            raise UserPathRefused(f"{raw!r} starts with ~, and HOME is not an absolute path")
        text = home + text[1:]
    elif text.startswith("~"):
        raise UserPathRefused(f"{raw!r}: ~user is not expanded; give the absolute path")
    if not text.startswith("/"):
        raise UserPathRefused(f"{raw!r} is relative: give an absolute path (it would follow the current directory)")
    normal = posixpath.normpath(text)
    return "/" + normal.lstrip("/")  # normpath keeps a leading "//"; one slash is the same directory


def _expand_variables(raw: str, env: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group("braced") or match.group("bare")
        found = env.get(name)
        if not found:
            raise UserPathRefused(f"{raw!r} names ${name}, which is not set (or empty)")
        return found

    return _VARIABLE.sub(value, raw)


def xdg_home(variable: str, fallback: str, env: Mapping[str, str], home: str) -> str:
    """The XDG base folder ``variable`` names (``XDG_CONFIG_HOME``, ``XDG_CACHE_HOME``, ``XDG_DATA_HOME``...),
    else ``fallback`` under ``home`` (``.config``, ``.cache``, ``.local/share``). The one place this rule lives:
    an XDG value that is not absolute is invalid and ignored (the spec's rule: it would follow the current
    directory). ``home``: ``$HOME``, else the password database's, as the caller finds it."""
    value = env.get(variable)
    return value if value and value.startswith("/") else posixpath.join(home, fallback)
