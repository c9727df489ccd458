"""What a host name given on the command line may be: the name a holder file records (gethostname)."""

from __future__ import annotations

import re

# Labels of letters, digits, "-" and "_" (some sites' node names hold "_"), separated by single dots;
# 253 characters at most, as DNS allows. No "/", no "..", no space or control character.
_LABEL = re.compile(r"[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
MAX_LENGTH = 253


def host_name_problem(name: str) -> str | None:
    """Why ``name`` is not a host name, or None."""
    shown = name if len(name) <= 80 and name.isprintable() else repr(name[:80]) + ("..." if len(name) > 80 else "")
    if not name:
        return "the host name is empty"
    if len(name) > MAX_LENGTH:
        return f"the host name {shown} is longer than {MAX_LENGTH} characters"
    labels = name.removesuffix(".").split(".")
    if not all(_LABEL.fullmatch(label) for label in labels):
        return (f"{shown} is not a host name (letters, digits, '-' and '_' in labels of at most 63, "
                "separated by single dots)")
    return None
