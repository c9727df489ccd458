"""The lean routing path (entrypoints/dunscaith/routing.py) against the typer app it stands in front of."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import typer.main

from dunscaith.entrypoints.dunscaith import routing
from dunscaith.entrypoints.dunscaith.app import app
from dunscaith.entrypoints.dunscaith.root import kinds, settings_cache
from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings


def _command(name: str) -> Any:
    group: Any = typer.main.get_command(app)  # a group whose job commands load when asked for (lazy_commands)
    return group.get_command(typer.Context(group), name)


@pytest.mark.parametrize("name", sorted(routing.ROUTED))
def test_each_routed_command_takes_one_job_argument_and_only_the_flags_routing_knows(name: str) -> None:
    params = _command(name).params
    arguments = [p for p in params if p.param_type_name == "argument"]
    typer_only = routing.TYPER_ONLY.get(name, frozenset())
    options = [p for p in params if p.param_type_name == "option" and p.name != "help"
               and not set(p.opts) & typer_only]
    assert [a.name for a in arguments] == ["job"]
    assert all(o.is_flag for o in options), f"{name}: an option that takes a value cannot be routed lean"
    assert {flag for o in options for flag in (*o.opts, *o.secondary_opts)} == set(routing.ROUTED[name])


def test_the_hidden_flag_is_named_once() -> None:
    from dunscaith.domain.model.forwarding import hidden_flag, request

    assert request.FORWARDED_ENV is hidden_flag.FORWARDED_ENV
    repository = Path(hidden_flag.__file__).resolve().parents[3]
    written = [str(path.relative_to(repository)) for layer in ("domain", "ports", "adapters", "entrypoints")
               for path in sorted((repository / layer).rglob("*.py"))
               if f'"{hidden_flag.FORWARDED_ENV}"' in path.read_text("utf-8")]
    assert written == ["domain/model/forwarding/hidden_flag.py"]


@pytest.mark.parametrize(("argv", "job"), [
    (["status", "j1"], "j1"),
    (["status", "--json", "j1"], "j1"),
    (["status", "j1", "--json"], "j1"),
    (["cancel", "exp", "--state", "failed"], None),  # a sweep's elements: typer resolves them
    (["resubmit", "exp", "--failed"], None),
    (["hold", "j-2"], "j-2"),
    (["supervise", "-f", "j3"], "j3"),
    (["give-up", "--json", "j4"], "j4"),
    (["status"], None),  # every job: the list, never forwarded
    (["status", "a", "b"], None),
    (["status", "--help", "j1"], None),
    (["status", "--", "j1"], None),
    (["status", "--jsn", "j1"], None),
    (["status", "--json=1", "j1"], None),
    (["supervise", "--json", "j1"], "j1"),
    (["supervise", "--jsn", "j1"], None),  # not one of supervise's flags: typer says so
    (["logs", "j1"], None),
    (["submit", "--", "true"], None),
    ([], None),
])
def test_only_a_plain_routed_command_line_names_its_job(argv: list[str], job: str | None) -> None:
    assert routing.routed_job(argv) == job


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path), "USER": "u", "XDG_CONFIG_HOME": str(tmp_path / "config"), **extra}


def test_the_settings_key_changes_with_every_input_of_load_settings(tmp_path: Path) -> None:
    env = _env(tmp_path)
    config = tmp_path / "config" / "dunscaith" / "config.toml"
    config.parent.mkdir(parents=True)
    base = settings_cache.settings_key(env)
    assert settings_cache.settings_key(dict(env)) == base  # the same inputs, the same key
    assert settings_cache.settings_key({**env, "PWD": "/elsewhere", "SSH_CONNECTION": "x"}) == base

    config.write_text('[forwarding]\nssh_config = "$SITE/ssh_config"\n')
    with_file = settings_cache.settings_key(env)
    assert with_file != base
    assert settings_cache.settings_key({**env, "SITE": "/a"}) != settings_cache.settings_key({**env, "SITE": "/b"})
    config.chmod(0o600)
    assert settings_cache.settings_key(env) != with_file  # a mode the reader may judge is an input too
    key = settings_cache.settings_key
    assert key({**env, "DUNSCAITH_FORWARDING__HEARTBEAT": "2"}) != key(env)
    assert key({**env, "dunscaith_forwarding__heartbeat": "2"}) != key(env)  # pydantic-settings ignores case
    assert key({**env, "HOME": "/home/other"}) != key(env)


def test_the_settings_key_changes_with_the_kinds_registered_and_their_settings_models(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: a kind's table is validated by its own model, so a remembered tree is one of the kinds
    registered when it was validated: a kind added, removed, or whose model changed validates it again."""
    env = _env(tmp_path)
    base = settings_cache.settings_key(env)
    monkeypatch.setitem(kinds.SCHEDULER_KINDS, "pbs", "tests.fixtures.pbs.kind")
    with_pbs = settings_cache.settings_key(env)
    assert with_pbs != base
    lines, files = kinds.settings_sources()
    assert "scheduler pbs tests.fixtures.pbs.kind" in lines
    model = str(Path(__file__).resolve().parents[2] / "fixtures" / "pbs" / "settings.py")
    assert model in files  # found without importing the kind
    copy = tmp_path / "copied_kinds"
    shutil.copytree(Path(model).parent, copy / "pbs")
    (copy / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(kinds.SCHEDULER_KINDS, "pbs", "copied_kinds.pbs.kind")
    before = settings_cache.settings_key(env)
    (copy / "pbs" / "settings.py").write_text((copy / "pbs" / "settings.py").read_text() + "\n# changed\n")
    assert settings_cache.settings_key(env) != before  # the same line, its model changed
    monkeypatch.delitem(kinds.SCHEDULER_KINDS, "pbs")
    assert settings_cache.settings_key(env) == base


def test_a_remembered_answer_is_used_only_for_its_key_and_only_from_a_private_file(tmp_path: Path) -> None:
    env = _env(tmp_path)
    found = DunscaithSettings.model_validate({"forwarding": {"transport": "openssh", "ssh_config": "/x/ssh_config",
                                                             "heartbeat": 2.5, "connect_timeout": 7}})
    settings_cache.remember("k1", found, env)
    path = settings_cache.cache_file(env)
    assert path == tmp_path / ".cache" / "dunscaith" / "settings.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    remembered = settings_cache.read_cached("k1", env)
    assert remembered is not None and remembered.forwarding.ssh_config == Path("/x/ssh_config")
    assert (remembered.forwarding.transport, remembered.forwarding.heartbeat) == ("openssh", 2.5)
    assert settings_cache.read_cached("k2", env) is None
    path.chmod(0o644)  # open to others: not trusted
    assert settings_cache.read_cached("k1", env) is None
    path.chmod(0o600)
    path.write_text("{not json")
    assert settings_cache.read_cached("k1", env) is None
    path.unlink()
    other = tmp_path / "planted.json"
    settings_cache.remember("k1", found, {**env, "XDG_CACHE_HOME": str(tmp_path / "p")})
    (tmp_path / "p" / "dunscaith" / "settings.json").rename(other)
    path.symlink_to(other)  # a planted link is never followed
    assert settings_cache.read_cached("k1", env) is None


# What a forwarded command has imported when its ssh starts: the pointer, the settings' remembered
# answer and the transport, never the job state, the CLI, the settings' validator or the container.
NOT_BEFORE_SSH = ("typer", "click", "pydantic", "pydantic_settings", "dependency_injector", "sqlalchemy",
                  "dunscaith.domain.model.jobs.state", "dunscaith.domain.model.jobs.events",
                  "dunscaith.domain.model.jobs.attendance", "dunscaith.domain.services",
                  "dunscaith.entrypoints.dunscaith.root.container", "dunscaith.entrypoints.dunscaith.root.settings")
_PROBE = """
import subprocess, sys
def popen(argv, *args, **kw):
    print(sorted(sys.modules), file=sys.stderr)
    sys.stderr.flush()
    import os
    os._exit(0)
subprocess.Popen = popen
sys.argv = ["dunscaith", "status", "j1"]
from dunscaith.entrypoints.dunscaith import front_door
front_door.main()
"""


def test_a_forwarded_command_starts_ssh_before_importing_the_cli_or_the_job_state(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys
    from datetime import UTC, datetime

    from dunscaith.adapters.pointers.files import FilePointers
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.domain.model.jobs.pointer import Pointer
    from dunscaith.domain.model.jobs.record import HostIdentity

    env = {**_env(tmp_path), "PATH": os.environ["PATH"], "DUNSCAITH_RECORDS__ROOT": str(tmp_path / "records")}
    FilePointers(tmp_path / "config" / "dunscaith" / "jobs").write(Pointer(
        JobId("j1"), "login1", "/var/tmp/r", HostIdentity("f" * 32, "login1"), "/opt/d/bin/dunscaith", "local",
        "local", "running", datetime.now(UTC), None))
    for _ in range(2):  # the first validates the settings and remembers them; the second uses the answer
        done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stderr
    imported = set(eval(done.stderr.strip().splitlines()[-1]))
    assert "dunscaith.adapters.transport.openssh" in imported  # it did reach ssh
    early = sorted(m for m in imported for name in NOT_BEFORE_SSH if m == name or m.startswith(name + "."))
    assert early == []


def _forwarded(kind: str, stdout_bytes: int = 0) -> Any:
    from dunscaith.domain.model.forwarding.verdict import Kind, Reason, Verdict, message
    from dunscaith.domain.services.forwarding.forward import Forwarded

    verdict = (Verdict(Kind.NEVER_RAN, Reason.CONNECTION, 2, "Connection timed out") if kind == "never"
               else Verdict(Kind.MAY_HAVE_RUN, Reason.SILENT, 6))
    rid = "ab" * 16
    return Forwarded(rid, "login3", verdict, message(verdict, "login3", rid), stdout_bytes=stdout_bytes)


@pytest.mark.parametrize(("kind", "code", "exit_code"), [("never", "never-ran", 2), ("may", "may-have-run", 6)])
def test_under_json_a_hop_that_failed_prints_the_error_object_on_stdout(
        capsys: pytest.CaptureFixture[str], kind: str, code: str, exit_code: int) -> None:
    import json

    result = _forwarded(kind)
    routing.report(result, as_json=True)
    out, err = capsys.readouterr()
    assert json.loads(out) == {"error": {"code": code, "message": result.message, "exit_code": exit_code},
                               "host": "login3", "request": "ab" * 16}
    assert err == f"dunscaith: {result.message}\n"


def test_without_json_or_once_the_command_s_own_output_began_stdout_gets_nothing_more(
        capsys: pytest.CaptureFixture[str]) -> None:
    routing.report(_forwarded("never"))
    routing.report(_forwarded("may", stdout_bytes=12), as_json=True)
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("dunscaith: ") == 2
