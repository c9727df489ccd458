"""The front door's plain ``submit -- COMMAND`` (issue 26): which lines it takes, what it imports, that
every other line goes on to the typer app, and that its settings are load_settings' remembered answer.
Its output against the app's: tests/e2e/jobs/test_plain_submit.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import settings_cache, submit_settings, submits
from dunscaith.entrypoints.dunscaith.settings import load_settings
from dunscaith.entrypoints.dunscaith.settings_cache import ReadSettings, RoutingSettings
from dunscaith.entrypoints.dunscaith.submit_settings import (
    EscalationsPlace,
    NotifyPlace,
    RecoveryPlace,
    ResidualPlace,
    SubmitSettings,
    SupervisePlace,
)
from dunscaith.entrypoints.dunscaith.submits import PlainSubmit
from tests.unit.test_plain_reads import _front_door


@pytest.mark.parametrize(("argv", "taken"), [
    (["submit", "--", "true"], PlainSubmit(["true"])),
    (["submit", "--", "sh", "-c", "exit 3"], PlainSubmit(["sh", "-c", "exit 3"])),
    (["submit", "--", "x", "--json", "--", "--name", "n"], PlainSubmit(["x", "--json", "--", "--name", "n"])),
    (["submit", "--name", "n1", "--", "true"], PlainSubmit(["true"], name="n1")),
    (["submit", "--name=n1", "--", "true"], PlainSubmit(["true"], name="n1")),
    (["submit", "--json", "--", "true"], PlainSubmit(["true"], as_json=True)),
    (["submit", "--parsable", "--", "true"], PlainSubmit(["true"], parsable=True)),
    (["submit", "-f", "--", "true"], PlainSubmit(["true"], follow=True)),
    (["submit", "--follow", "--json", "--parsable", "--name", "n", "--", "true"],
     PlainSubmit(["true"], "n", True, True, True)),
])
def test_the_plain_lines_are_taken(argv: list[str], taken: PlainSubmit) -> None:
    assert submits.plain_line(argv) == taken


@pytest.mark.parametrize("argv", [
    [], ["submit"], ["submit", "--"], ["submit", "--help"], ["submit", "--help", "--", "true"],
    ["submit", "-h", "--", "true"], ["submit", "script.sh"], ["submit", "true", "--", "x"],
    ["submit", "--cluster", "local", "--", "true"], ["submit", "--mem", "1G", "--", "true"],
    ["submit", "--array", "1-3", "--name", "n", "--", "true"], ["submit", "--json", "--json", "--", "true"],
    ["submit", "-f", "--follow", "--", "true"], ["submit", "--name", "a", "--name", "b", "--", "true"],
    ["submit", "--name", "--", "true"], ["submit", "--name", "", "--", "true"], ["submit", "--name=", "--", "true"],
    ["submit", "--name", "-x", "--", "true"], ["submit", "--job-exit-code", "--", "true"],
    ["submit", "-fj", "--", "true"], ["Submit", "--", "true"], ["supervise", "--", "j1"],
    # waiting for other jobs, and a pipeline: the typer path's (submit_job.submit checks them)
    ["submit", "--after", "a", "--", "true"], ["submit", "--name", "b", "--after-any=a", "--", "true"],
    ["submit", "--after-each", "s", "--", "true"], ["submit", "--pipeline", "p.toml"],
    ["submit", "--pipeline", "p.toml", "--", "true"],
])
def test_every_other_line_goes_to_the_app(argv: list[str]) -> None:
    assert submits.plain_line(argv) is None


def _clean(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in [n for n in os.environ if n.startswith(("DUNSCAITH_", "XDG_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))


def test_a_store_the_container_opens_goes_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv("DUNSCAITH_RECORDS__BACKEND", "postgresql")
    monkeypatch.setenv("DUNSCAITH_RECORDS__URL", "postgresql://u@localhost:9/db")
    assert submits.submit(["submit", "--", "true"]) is None


def test_a_forwarded_command_goes_to_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(submits.FORWARDED_ENV, "request-1")
    assert submits.submit(["submit", "--", "true"]) is None


def test_the_submit_settings_are_load_settings_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "0.7")
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__EXIT_CODE", "job")
    monkeypatch.setenv("DUNSCAITH_RECOVERY__ATTEMPTS", "5")
    monkeypatch.setenv("DUNSCAITH_ESCALATIONS__COMMAND", '["notify", "-x"]')
    monkeypatch.setenv("DUNSCAITH_RESIDUAL__POLICY", "manual")
    full = load_settings()
    for found in (submit_settings.submit_settings(), submit_settings.submit_settings()):  # validated, remembered
        s = full.supervise
        assert found.supervise == SupervisePlace(s.poll, s.poll_max, s.giveup, s.drain, s.wait, s.absence, "job")
        assert found.recovery.attempts == 5 and found.residual.policy == "manual"
        assert found.escalations == EscalationsPlace(["notify", "-x"], full.escalations.timeout)
        assert found.records.root == full.records.root and found.records.backend == "sqlite"
        assert found.cluster("local").adapter == full.cluster("local").adapter
        assert found.read == settings_cache.read_settings()
    with pytest.raises(BadInput) as refused:
        found.cluster("nowhere")
    with pytest.raises(BadInput) as by_load:
        full.cluster("nowhere")
    assert str(refused.value) == str(by_load.value)  # load_settings' own refusal, word for word


def test_an_answer_remembered_without_the_submit_settings_is_read_again(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    routing = RoutingSettings("sqlite", None, None, 2.5, 7, 9)
    reads = ReadSettings(routing, Path("/r"), 0.5, False, (("local", "local"),))
    submit = SubmitSettings(reads, SupervisePlace(0.5, 9.0, 60.0, 10.0, 3.0, 2.0, "dunscaith"), RecoveryPlace(3, {}),
                            EscalationsPlace(["a"], 10.0), ResidualPlace("list"), NotifyPlace(["n"], ["outcome"], 5.0))
    values = {"poll": 0.5, "poll_max": 9.0, "giveup": 60.0, "drain": 10.0, "wait": 3.0, "absence": 2.0,
              "exit_code": "dunscaith", "attempts": 3, "escalations_command": ["a"], "escalations_timeout": 10.0,
              "residual_policy": "list", "notify_command": ["n"], "notify_on": ["outcome"], "notify_timeout": 5.0,
              "recovery": {}}
    settings_cache.remember("k1", routing, env, reads=reads, submit=values)
    assert submit_settings.read_cached_submit("k1", env) == submit
    assert submit_settings.read_cached_submit("k2", env) is None
    settings_cache.remember("k1", routing, env, reads=reads, submit={**values, "escalations_command": "a"})
    assert submit_settings.read_cached_submit("k1", env) is None  # not ours: validated again
    settings_cache.remember("k1", routing, env, reads=reads)  # by a dunscaith before the plain submit
    assert settings_cache.read_cached_reads("k1", env) == reads
    assert submit_settings.read_cached_submit("k1", env) is None  # validated again, never guessed


def test_a_plain_submit_imports_no_typer_pydantic_nor_dependency_injector(tmp_path: Path) -> None:
    _front_door(tmp_path, "list")  # the first command validates the settings (pydantic) and remembers them
    shown, code, loaded = _front_door(tmp_path, "submit", "--name", "j1", "--", "true")
    assert (code, loaded) == ("0", []) and "Traceback" not in shown
    assert _front_door(tmp_path, "submit", "--json", "--", "false")[1:] == ("1", [])
    assert _front_door(tmp_path, "submit", "--name", "j1", "--", "true")[1:] == ("2", [])  # taken: refused


def test_a_line_the_plain_path_does_not_take_is_the_apps(tmp_path: Path) -> None:
    _front_door(tmp_path, "list")
    shown, code, loaded = _front_door(tmp_path, "submit", "--help")
    assert code == "0" and "typer" in loaded and "Usage: dunscaith submit" in shown
    assert "typer" in _front_door(tmp_path, "submit", "--cluster", "local", "--", "true")[2]
