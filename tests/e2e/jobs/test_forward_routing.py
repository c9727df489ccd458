"""A job command for another host's job is routed before the CLI is built: what the user sees is the same.

The lean path (entrypoints/dunscaith/routing.py) forwards without importing typer, and without pydantic
once the settings it validated are remembered; a setting that is wrong is refused as on every path.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.jobs.cli import Cli


def _imports(stderr: str) -> set[str]:
    lines = [line for line in stderr.splitlines() if line.startswith("import time:")]
    return {line.split("|")[-1].strip().split(".")[0] for line in lines}


def _said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("import time:")]


def test_a_forwarded_command_starts_without_typer_and_once_validated_without_pydantic(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    first = cli.run("status", "far", PYTHONPROFILEIMPORTTIME="1")
    assert first.returncode == 2
    [line] = _said(first.stderr)
    assert "could not connect to login2" in line and "nothing ran on login2" in line
    assert "typer" not in _imports(first.stderr) and "pydantic" in _imports(first.stderr)  # validated once
    again = cli.run("status", "far", PYTHONPROFILEIMPORTTIME="1")
    assert _said(again.stderr) == _said(first.stderr)
    assert not {"typer", "pydantic", "pydantic_settings", "dependency_injector", "sqlalchemy"} & _imports(again.stderr)


def test_a_wrong_setting_is_refused_by_the_routed_path_with_the_line_every_path_gives(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    assert cli.run("status", "far").returncode == 2  # a valid configuration, remembered
    config = cli.tmp / "home" / ".config" / "dunscaith" / "config.toml"
    config.write_text('[forwarding]\ntransport = "telnet"\n')
    routed = cli.run("hold", "far")
    full = cli.run("list")  # not routed: the typer app loads the settings itself
    assert routed.returncode == full.returncode == 2
    assert routed.stderr == full.stderr and len(routed.stderr.strip().splitlines()) == 1
    assert f"configuration file {config}" in routed.stderr and "transport" in routed.stderr
    as_json = cli.run("status", "--json", "far")
    assert as_json.returncode == 2 and json.loads(as_json.stdout)["error"]["code"] == "bad-input"
    config.write_text("")
    variable = cli.run("status", "far", DUNSCAITH_FORWARDING__HEARTBEAT="often")
    assert variable.returncode == 2 and "DUNSCAITH_FORWARDING__HEARTBEAT" in variable.stderr
    assert "could not connect" not in variable.stderr  # refused before any hop
    unknown = cli.run("status", "far", DUNSCAITH_FORWARDING__HEARTBEET="5")
    assert unknown.returncode == 2 and "DUNSCAITH_FORWARDING__HEARTBEET" in unknown.stderr


def test_a_job_of_this_host_or_without_a_pointer_goes_on_to_the_app(cli: Cli) -> None:
    missing = cli.run("status", "nowhere")
    assert missing.returncode == 2 and "nowhere" in missing.stderr and "login2" not in missing.stderr
    cli.pointer_of_another_host("far", "running")
    forwarded_here = cli.run("status", "far", DUNSCAITH_FORWARDED="0" * 32)
    assert forwarded_here.returncode == 2 and "never forwards again" in forwarded_here.stderr


def test_the_remembered_settings_are_private(cli: Cli) -> None:
    cli.pointer_of_another_host("far", "running")
    cli.run("status", "far")
    cache = cli.tmp / "home" / ".cache" / "dunscaith" / "settings.json"
    assert oct(cache.stat().st_mode & 0o777) == "0o600"
    assert oct(os.stat(cache.parent).st_mode & 0o777) == "0o700"
    remembered = json.loads(cache.read_text())["whole"]  # the validated tree, every value
    assert remembered["records"]["backend"] == "sqlite"
    assert Path(remembered["forwarding"]["ssh_config"]) == cli.ssh_config()
