"""The front door's plain ``status``/``list`` (issue 26): which lines it takes, what it imports, and that
every other line goes on to the typer app. Its output against the app's: tests/e2e/jobs/test_plain_reads.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV
from dunscaith.entrypoints.dunscaith import app, reads


@pytest.mark.parametrize(("argv", "taken"), [
    (["status", "j1"], ("status", "j1", False)),
    (["status", "j1", "--json"], ("status", "j1", True)),
    (["status", "--json", "j1"], ("status", "j1", True)),
    (["status"], ("status", None, False)),
    (["status", "--json"], ("status", None, True)),
    (["list"], ("list", None, False)),
    (["list", "--json"], ("list", None, True)),
])
def test_the_plain_lines_are_taken(argv: list[str], taken: tuple[str, str | None, bool]) -> None:
    assert reads.plain_line(argv) == taken


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["status", "--help"], ["status", "-h"], ["list", "--help"], ["status", "j1", "--watch"],
    ["status", "j1", "--state", "failed"], ["status", "j1", "--state=failed"], ["status", "j1", "j2"],
    ["status", "--", "j1"], ["status", "j1", "--json", "--json"], ["status", ""], ["status", "-j1"],
    ["list", "j1"], ["list", "--all"], ["list", "-w"], ["list", "--limit", "3"], ["list", "--json", "--json"],
    ["logs", "j1"], ["Status", "j1"], ["hold", "j1"],
])
def test_every_other_line_goes_to_the_app(argv: list[str]) -> None:
    assert reads.plain_line(argv) is None


def test_the_refusals_are_the_apps() -> None:
    assert reads.refusals() == app._refusals()


def test_a_store_the_container_opens_goes_to_the_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(("DUNSCAITH_", "XDG_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DUNSCAITH_RECORDS__BACKEND", "postgresql")
    monkeypatch.setenv("DUNSCAITH_RECORDS__URL", "postgresql://u@localhost:9/db")
    assert reads.read(["status", "j1"]) is None
    assert reads.read(["list"]) is None


def test_a_forwarded_command_goes_to_the_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORWARDED_ENV, "request-1")
    assert reads.read(["status", "j1"]) is None


# What a plain status or list imports: never typer, pydantic or dependency-injector once the settings
# are remembered; the line the path does not take loads typer (the app answers it).
PROBE = ("import os, sys; sys.argv = ['dunscaith', *sys.argv[1:]]\n"
         "def _exit(code):\n"  # a path that ends at once (end_now) ends here too, so the probe can look
         "    raise SystemExit(code)\n"
         "os._exit = _exit\n"
         "from dunscaith.entrypoints.dunscaith.front_door import main\n"
         "code = 0\n"
         "try:\n"
         "    main()\n"
         "except SystemExit as exc:\n"
         "    code = exc.code\n"
         "sys.stdout.flush()\n"
         "heavy = {'typer', 'pydantic', 'pydantic_settings', 'dependency_injector', 'click'}\n"
         "print(code, sorted({m.split('.')[0] for m in sys.modules} & heavy), file=sys.stderr)\n")


def _front_door(tmp_path: Path, *argv: str) -> tuple[str, str, list[str]]:
    """stdout, the exit code and the heavy packages the front door imported for ``argv``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DUNSCAITH_", "_DUNSCAITH", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), DUNSCAITH_RECORDS__ROOT=str(tmp_path / "records"), NO_COLOR="1")
    (tmp_path / "home").mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    code, loaded = done.stderr.strip().splitlines()[-1].split(" ", 1)
    return done.stdout, code, eval(loaded)


def test_a_plain_status_and_list_import_no_typer_pydantic_nor_dependency_injector(tmp_path: Path) -> None:
    _front_door(tmp_path, "list")  # the first command validates the settings (pydantic) and remembers them
    shown, code, loaded = _front_door(tmp_path, "list")
    assert (code, loaded) == ("0", []) and "Traceback" not in shown
    assert _front_door(tmp_path, "status", "nothing-here", "--json")[1:] == ("2", [])
    assert _front_door(tmp_path, "status", "--json")[1:] == ("0", [])


def test_a_line_the_plain_path_does_not_take_is_the_apps(tmp_path: Path) -> None:
    _front_door(tmp_path, "list")
    shown, code, loaded = _front_door(tmp_path, "status", "--help")
    assert code == "0" and "typer" in loaded and "Usage: dunscaith status" in shown
    assert "typer" in _front_door(tmp_path, "list", "--all")[2]
    assert "typer" in _front_door(tmp_path, "status", "nothing-here", "--state", "failed")[2]
