"""How a value the user gave is echoed in a message: quoted, every control character escaped, cut when long.

A message is one line on a terminal: a raw newline in a job name would forge a second line, an escape
sequence would drive the terminal, and a 10,000-character name would bury what the line says. Pure.
"""

from __future__ import annotations

import re

LONGEST = 80  # characters of a value shown whole; a longer one is cut, its length said
# patterns, compiled (and cached by ``re``) when first used: every command's start imports this module
_CONTROL = r"[\x00-\x1f\x7f-\x9f]"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_WORD = r"\S{257,}"


def escaped(text: str) -> str:
    """``text`` with each control character written as an escape (``\\n``, ``\\x1b``): one line, inert."""
    if text.isprintable():  # no control character (each is unprintable): the usual case, without a regex
        return text
    return re.sub(_CONTROL, lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def cut(text: str, longest: int = LONGEST) -> str:
    """``text`` whole, or its start and end around ``…`` with its length said."""
    if len(text) <= longest:
        return text
    head = max(longest * 2 // 3, 1)
    tail = max(longest - head - 1, 0)
    return f"{text[:head]}…{text[len(text) - tail:] if tail else ''} ({len(text)} characters)"


def shown(value: str, longest: int = LONGEST) -> str:
    """A value the user gave, for a message: in quotes, escaped, cut (``'a\\nb'``, ``'aaa…aa (10000 characters)'``)."""
    return "'" + cut(escaped(value).replace("'", "\\'"), longest) + "'"


def one_line(message: str) -> str:
    """A whole message made safe to print as one line: control characters escaped, and any word longer
    than 256 characters (a value that reached it unshown) cut."""
    line = escaped(message)
    if len(line) <= 256:  # no word can be longer: the usual case, without a regex
        return line
    return re.sub(_WORD, lambda m: cut(m.group(), 160), line)


def reason(exc: BaseException) -> str:
    """Why something failed, in the words a user can act on: ``/path: Permission denied``, not
    ``PermissionError: [Errno 13] Permission denied: '/path'``; the class name only when nothing else
    says anything (it is a program's error then, and names itself)."""
    if isinstance(exc, OSError) and exc.strerror:
        where = [str(name) for name in (exc.filename, exc.filename2) if name is not None]
        return f"{' -> '.join(where)}: {exc.strerror}" if where else exc.strerror
    text = str(exc)
    return text if text.strip() else type(exc).__name__
