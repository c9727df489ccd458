"""The one rule for every path a user gives: ~ and $VAR expanded, absolute, never empty."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.user_paths import UserPathRefused, expand_user_path

ENV = {"SCRATCH": "/scratch/alice", "EMPTY": ""}


@pytest.mark.parametrize(("raw", "expected"), [
    ("/var/tmp/dunscaith-alice", "/var/tmp/dunscaith-alice"),
    ("~", "/home/alice"),
    ("~/records", "/home/alice/records"),
    ("$SCRATCH/records", "/scratch/alice/records"),
    ("${SCRATCH}/r", "/scratch/alice/r"),
    ("//var//tmp/./x/", "/var/tmp/x"),
])
def test_expanded_as_a_user_expects(raw: str, expected: str) -> None:
    assert expand_user_path(raw, ENV, "/home/alice") == expected


@pytest.mark.parametrize(("raw", "says"), [
    ("", "is empty"), ("   ", "is empty"), ("relative/root", "is relative"), (".", "is relative"),
    ("$NOPE/x", r"names \$NOPE, which is not set"), ("$EMPTY/x", r"names \$EMPTY"),
    ("~bob/x", "~user is not expanded"), ("/a\x00b", "NUL"),
])
def test_refused(raw: str, says: str) -> None:
    with pytest.raises(UserPathRefused, match=says):
        expand_user_path(raw, ENV, "/home/alice")


def test_tilde_with_no_usable_home_is_refused() -> None:
    with pytest.raises(UserPathRefused, match="HOME is not an absolute path"):
        expand_user_path("~/x", ENV, "")
