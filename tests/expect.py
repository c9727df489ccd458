"""Small typed checks a test states once, so that mypy follows what the test expects."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def present(value: T | None) -> T:
    """``value``, which the test expects to be there (an attempt, an answer, a pipe); it fails here if it is None."""
    assert value is not None, "expected a value, found None"
    return value
