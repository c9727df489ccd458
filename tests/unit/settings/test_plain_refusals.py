"""Issue 22 items 12 and 13 in the settings: each refusal one line naming the setting, in plain words."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.root.settings import load_settings
from dunscaith.entrypoints.plain_words import plain


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("DUNSCAITH_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".config" / "dunscaith").mkdir(parents=True)
    return tmp_path


def _file(home: Path, text: str) -> Path:
    path = home / ".config" / "dunscaith" / "config.toml"
    path.write_text(text)
    return path


def _refused(**flags: object) -> str:
    with pytest.raises(BadInput) as caught:
        load_settings(**flags)
    message = str(caught.value)
    assert "\n" not in message and "Input should" not in message
    return message


@pytest.mark.parametrize(("text", "says"), [
    ("[supervise]\npoll = 100\npoll_max = 5\n",
     ": supervise.poll (100 s) is longer than supervise.poll_max (5 s): supervise.poll is the first interval"),
    ('[escalations]\ncommand = ["./notify"]\n', "escalations.command: the program './notify' is relative"),
    ('[escalations]\ncommand = [""]\n', "escalations.command: the program '' is relative"),
    ('[records]\nroot = "/var/tmp/a\\tb"\n', "records.root: '/var/tmp/a\\tb' contains a control character"),
    ("[supervise]\npoll = \"abc\"\n", "supervise.poll: must be a number, not 'abc'"),
    ("[recovery]\nattempts = 1.5\n", "recovery.attempts: must be a whole number, not 1.5"),
    ("[recovery]\nattempts = 0\n", "recovery.attempts: must be at least 1, not 0"),
    ('[records]\nbackend = "postgres"\n',
     "records.backend: must be 'sqlite' or 'postgresql', not 'postgres' (did you mean postgresql?)"),
    ('[residual]\npolicy = 3\n', "residual.policy: must be 'list' or 'manual', not 3"),
    ("[escalations]\ncommand = \"notify\"\n", "escalations.command: must be a list ("),
])
def test_a_file_mistake_is_one_plain_line_naming_the_file_and_the_key(home: Path, text: str, says: str) -> None:
    path = _file(home, text)
    message = _refused()
    assert message.startswith(f"configuration file {path}: ") and says in message, message


def test_poll_within_poll_max_and_a_bare_or_absolute_program_are_taken(home: Path) -> None:
    _file(home, '[supervise]\npoll = 5\npoll_max = 5\n\n[escalations]\ncommand = ["notify-send", "./arg"]\n')
    settings = load_settings()
    assert (settings.supervise.poll, settings.escalations.command) == (5.0, ["notify-send", "./arg"])
    _file(home, "[supervise]\npoll = 3600\n")  # a slow supervisor asked for: poll_max (not given) follows it
    assert load_settings().supervise.poll == 3600.0
    _file(home, '[escalations]\ncommand = ["/usr/local/bin/notify"]\n')
    assert load_settings().escalations.command == ["/usr/local/bin/notify"]


def test_a_relative_or_empty_home_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for value in ("relhome", "", "~"):
        monkeypatch.setenv("HOME", value)
        assert _refused().startswith(f"HOME is '{value}', not an absolute path")


def test_a_dangling_link_is_refused_and_a_missing_file_is_the_defaults(home: Path) -> None:
    path = home / ".config" / "dunscaith" / "config.toml"
    assert load_settings().supervise.poll == 10.0
    path.symlink_to(home / "nowhere.toml")
    assert _refused() == (f"configuration file {path} is a symbolic link to {home / 'nowhere.toml'}, which does "
                          "not exist: point it at your configuration, or remove it to use the defaults")


def test_a_variable_mistake_names_the_variable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL_MAX", "5")
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "6")
    assert "supervise.poll (6 s) is longer than supervise.poll_max (5 s)" in _refused()
    monkeypatch.delenv("DUNSCAITH_SUPERVISE__POLL")
    monkeypatch.setenv("DUNSCAITH_RECORDS__ROOT", "/var/tmp/r\nx")
    assert _refused().startswith("variable DUNSCAITH_RECORDS__ROOT: records.root: '/var/tmp/r\\nx' contains")


@pytest.mark.parametrize(("error", "words"), [
    ({"type": "int_parsing", "input": "x"}, "must be a whole number, not 'x'"),
    ({"type": "greater_than_equal", "input": -1, "ctx": {"ge": 0}}, "must be at least 0, not -1"),
    ({"type": "greater_than", "input": 0.0, "ctx": {"gt": 0.0}}, "must be more than 0, not 0.0"),
    ({"type": "bool_parsing", "input": "yes please"}, "must be true or false, not 'yes please'"),
    ({"type": "missing", "input": {}}, "is required"),
    ({"type": "value_error", "msg": "Value error, our own words"}, "our own words"),
    ({"type": "string_type", "input": "a" * 500}, "(500 characters)"),
    ({"type": "something_new", "msg": "its own words"}, "its own words"),
])
def test_plain_words_for_each_kind_of_error(error: dict[str, object], words: str) -> None:
    assert words in plain(error)
