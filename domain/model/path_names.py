"""A file's name as ``pathlib`` writes it, for the modules on every local job's start (no ``pathlib``, ~4 ms).

``str(PurePosixPath(text))`` and ``str(PurePosixPath(text).parent)``, on a str: the wrapper
(``dunscaith remote run``) names its instance directory, makes it and says it in its messages exactly as
it did when the directory was a Path. Pure; tests/unit/domain/test_path_names.py holds both to pathlib.
"""

from __future__ import annotations


def normalized(text: str) -> str:
    """``str(PurePosixPath(text))``: repeated slashes and ``.`` parts dropped (``..`` kept), no trailing
    slash, exactly two leading slashes kept (POSIX leaves their meaning to the system), ``.`` for nothing."""
    root = "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    return root + "/".join(part for part in text.split("/") if part and part != ".") or "."


def parent(text: str) -> str:
    """``str(PurePosixPath(text).parent)``: the name of the folder that holds ``text`` (the root's is itself)."""
    name = normalized(text)
    head, _, _ = name.rpartition("/")
    if not head:
        return "/" if name.startswith("/") else "."  # "/x" -> "/", "x" -> "."
    if name.startswith("//") and head == "/":
        return "//"  # "//x" -> "//"
    return head


def absolute(text: str, cwd: str) -> str:
    """``str(Path(text).absolute())`` with ``cwd`` the working directory: ``text`` normalized, a relative
    name under ``cwd`` (``..`` is kept, never resolved: through a symlink it names another folder)."""
    return normalized(text if text.startswith("/") else f"{cwd.rstrip('/')}/{text}")  # cwd "/": "/x", not "//x"
