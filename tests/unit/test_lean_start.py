"""What each console script imports to print its help: typer and little else (issue 15's lean start-up).

The root help of ``dunscaith`` lists the job commands from a table (entrypoints/dunscaith/lazy_commands.py)
without importing them; the table must say what the commands themselves say.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from dunscaith.entrypoints.cli_support import new_app
from dunscaith.entrypoints.dunscaith.app import app
from dunscaith.entrypoints.dunscaith.lazy_commands import LAZY, register_module

HEAVY = ("domain", "adapters", "dependency_injector", "pydantic", "pydantic_settings", "httpx", "rich",
         "paramiko", "sqlalchemy")


def _imported(script: str, *argv: str) -> list[str]:
    probe = (f"import os, sys; sys.argv = [{script!r}, *{list(argv)!r}]\n"
             "def _exit(code):\n"  # a command ends at once (cli_support.end_at_once): here, so the probe can look
             "    raise SystemExit(code)\n"
             "os._exit = _exit\n"
             f"from dunscaith.entrypoints.{script}.front_door import main\n"
             "try:\n"
             "    main()\n"
             "except SystemExit:\n"
             "    pass\n"
             f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({list(HEAVY)!r})), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    loaded: list[str] = eval(done.stderr.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize("argv", [["--help"], []])
def test_the_root_help_imports_neither_the_domain_nor_a_container_nor_an_adapter(argv: list[str]) -> None:
    assert _imported("dunscaith", *argv) == []


def test_qdevices_help_imports_no_site_adapter_no_container_and_no_settings() -> None:
    assert _imported("qdevices", "--help") == []  # not even its own model: each command imports what it uses


def test_a_command_help_builds_no_container_and_opens_no_store() -> None:
    # nor pydantic: typer converts a parameter through it only for a value it must refuse (cli_support)
    assert set(_imported("dunscaith", "status", "--help")) <= {"domain"}
    assert set(_imported("dunscaith", "submit", "--help")) <= {"domain"}


def test_the_root_help_table_says_what_each_command_says() -> None:
    group = typer.main.get_group(app)
    ctx = typer.Context(group)
    for name, (_, short) in LAZY.items():
        command = group.get_command(ctx, name)
        assert command is not None, name
        assert command.get_short_help_str(10**6) == short, name


def test_every_command_the_modules_register_is_in_the_table() -> None:
    holder = new_app("")
    for module in {module for module, _ in LAZY.values()}:
        register_module(holder, module)
    registered = set(typer.main.get_group(holder).commands)
    assert registered == set(LAZY)
    assert {LAZY[name][0] for name in registered} == {module for module, _ in LAZY.values()}
