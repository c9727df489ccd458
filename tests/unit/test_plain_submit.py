"""The front door's plain ``submit -- COMMAND`` (issue 26): which lines it takes, what it imports, that
every other line goes on to the typer app, and that its settings are load_settings' remembered tree.
Its output against the app's: tests/e2e/jobs/test_plain_submit.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import recovery_rules, submits
from dunscaith.entrypoints.dunscaith.root import settings_cache, settings_view
from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings, load_settings
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
    monkeypatch.setenv(FORWARDED_ENV, "request-1")
    assert submits.submit(["submit", "--", "true"]) is None


def _values(model: Any, view: Any, place: str = "") -> list[str]:
    """Every key of the validated tree read through the plain view, as the model reads it: where they differ."""
    differ = []
    for name in type(model).model_fields:
        ours, theirs = getattr(model, name), getattr(view, name)
        if hasattr(type(ours), "model_fields"):
            differ += _values(ours, theirs, f"{place}{name}.")
            differ += [] if ours.model_fields_set == theirs.model_fields_set else [f"{place}{name} (given)"]
        elif name == "clusters" and not place:
            assert set(ours) == set(theirs)
            differ += [d for c in ours for d in _values(ours[c], theirs[c], f"{place}clusters.{c}.")]
        elif ours != theirs or type(ours) is not type(theirs):
            differ.append(f"{place}{name}: {ours!r} != {theirs!r}")
    return differ


def test_the_plain_settings_are_the_validated_tree_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "0.7")
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__EXIT_CODE", "job")
    monkeypatch.setenv("DUNSCAITH_RECOVERY__ATTEMPTS", "5")
    monkeypatch.setenv("DUNSCAITH_ESCALATIONS__COMMAND", '["notify", "-x"]')
    monkeypatch.setenv("DUNSCAITH_RESIDUAL__POLICY", "manual")
    monkeypatch.setenv("DUNSCAITH_FORWARDING__SSH_CONFIG", "~/ssh_config")
    (tmp_path / ".config" / "dunscaith").mkdir(parents=True)
    (tmp_path / ".config" / "dunscaith" / "config.toml").write_text(
        '[clusters.big]\nadapter = "slurm"\nbin_dir = "/opt/slurm/bin"\nenv = { A = "1" }\n'
        "[clusters.big.recovery]\nrequeue_on_time_limit = 2\n")
    full = load_settings()
    first, found = settings_cache.plain_settings(), settings_cache.plain_settings()  # validated, then remembered
    assert isinstance(first, DunscaithSettings) and isinstance(found, settings_view.Settings)
    assert _values(full, found) == []  # every key, a path as a path, a mapping as a mapping, what was given
    assert found.cluster("big").env == {"A": "1"} and found.forwarding.ssh_config == tmp_path / "ssh_config"
    for cluster in ("big", "local"):
        assert recovery_rules.recovery_for(found, cluster) == recovery_rules.recovery_for(full, cluster)
    with pytest.raises(BadInput) as refused:
        found.cluster("nowhere")
    with pytest.raises(BadInput) as by_load:
        full.cluster("nowhere")
    assert str(refused.value) == str(by_load.value)  # load_settings' own refusal, word for word


def test_a_remembered_tree_not_ours_is_validated_again(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    settings_cache.remember("k1", DunscaithSettings.model_validate({"supervise": {"poll": 0.5}}), env)
    found = settings_cache.read_cached("k1", env)
    assert found is not None and found.supervise.poll == 0.5 and found.supervise.model_fields_set == {"poll"}
    assert settings_cache.read_cached("k2", env) is None
    path = settings_cache.cache_file(env)
    obj = json.loads(path.read_text())
    damaged: dict[str, Any]
    for damaged in ({"shape": {"paths": [["records", "nowhere"]], "tables": []}}, {"whole": []},
                    {"shape": {"paths": [[1]], "tables": []}}, {"shape": None}, {"tree": "x"}):
        path.write_text(json.dumps({**obj, **damaged}))
        assert settings_cache.read_cached("k1", env) is None  # damaged or not ours: validated again
    path.write_text(json.dumps({**obj, "format": 1}))  # an older dunscaith's answer
    assert settings_cache.read_cached("k1", env) is None


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
