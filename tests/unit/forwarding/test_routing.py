"""The lean routing path (entrypoints/dunscaith/routing.py) against the typer app it stands in front of."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer.main

from entrypoints import cli_support
from entrypoints.dunscaith import routing, settings_cache
from entrypoints.dunscaith.app import app


def _command(name: str) -> Any:
    return typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]  # a group


@pytest.mark.parametrize("name", sorted(routing.ROUTED))
def test_each_routed_command_takes_one_job_argument_and_only_the_flags_routing_knows(name: str) -> None:
    params = _command(name).params
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name == "option" and p.name != "help"]
    assert [a.name for a in arguments] == ["job"]
    assert all(o.is_flag for o in options), f"{name}: an option that takes a value cannot be routed lean"
    assert {flag for o in options for flag in o.opts} == set(routing.ROUTED[name])


def test_the_console_script_knows_the_same_routed_commands_and_hidden_flag() -> None:
    from domain.model.forwarding.request import FORWARDED_ENV

    assert set(cli_support._ROUTED) == set(routing.ROUTED)
    assert cli_support.FORWARDED_ENV == FORWARDED_ENV


@pytest.mark.parametrize(("argv", "job"), [
    (["status", "j1"], "j1"),
    (["status", "--json", "j1"], "j1"),
    (["status", "j1", "--json"], "j1"),
    (["hold", "j-2"], "j-2"),
    (["supervise", "-f", "j3"], "j3"),
    (["give-up", "--json", "j4"], "j4"),
    (["status"], None),  # every job: the list, never forwarded
    (["status", "a", "b"], None),
    (["status", "--help", "j1"], None),
    (["status", "--", "j1"], None),
    (["status", "--jsn", "j1"], None),
    (["status", "--json=1", "j1"], None),
    (["supervise", "--json", "j1"], None),  # not one of supervise's flags: typer says so
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


def test_a_remembered_answer_is_used_only_for_its_key_and_only_from_a_private_file(tmp_path: Path) -> None:
    env = _env(tmp_path)
    found = settings_cache.RoutingSettings("sqlite", "openssh", Path("/x/ssh_config"), 2.5, 7, 9)
    settings_cache.remember("k1", found, env)
    path = settings_cache.cache_file(env)
    assert path == tmp_path / ".cache" / "dunscaith" / "settings.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert settings_cache.read_cached("k1", env) == found
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
