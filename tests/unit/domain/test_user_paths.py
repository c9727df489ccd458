"""The one rule for every path a user gives: ~ and $VAR expanded, absolute, never empty."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.domain.model.user_paths import UserPathRefused, expand_user_path, xdg_home

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


@pytest.mark.parametrize(("value", "found"), [
    ("/x/conf", "/x/conf"),
    ("conf", "/home/u/.config"),  # relative: invalid by the XDG spec, ignored
    ("", "/home/u/.config"),
    (None, "/home/u/.config"),
])
def test_the_xdg_rule_is_the_variable_when_absolute_else_the_fallback_under_home(value: str | None, found: str) -> None:
    env = {} if value is None else {"XDG_CONFIG_HOME": value}
    assert xdg_home("XDG_CONFIG_HOME", ".config", env, "/home/u") == found


def test_every_program_s_folders_follow_the_one_xdg_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from dunscaith.adapters.durable.config_dir import cache_home, config_home
    from dunscaith.entrypoints.qdevices.root import settings as qdevices

    monkeypatch.setenv("HOME", "/home/u")
    for variable in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"):
        monkeypatch.setenv(variable, "relative/ignored")
    assert (config_home(), cache_home()) == (Path("/home/u/.config"), Path("/home/u/.cache"))
    assert qdevices.config_file() == Path("/home/u/.config/qdevices/config.toml")
    assert qdevices.default_records() == Path("/home/u/.local/share/qdevices/records")
    monkeypatch.setenv("XDG_DATA_HOME", "/data")
    monkeypatch.setenv("XDG_CACHE_HOME", "/cache")
    assert (qdevices.default_records(), cache_home()) == (Path("/data/qdevices/records"), Path("/cache"))
