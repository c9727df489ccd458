"""Issue 37: the console script keeps the code of the dataclasses' generated methods in the user's cache
folder (root/dataclass_code.py). A command run from the kept code prints and exits as one that compiled
every class itself; a damaged file is only compiled over, and written again whole."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow

KEEP = {"PYTHONDONTWRITEBYTECODE": ""}  # empty: not set, as for a user (the code is kept as bytecode is)


def _seen(done: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def test_commands_run_from_the_kept_code_as_they_run_compiling_it(cli: Cli) -> None:
    kept = cli.tmp / "home" / ".cache" / "dunscaith" / "dataclass-code.marshal"
    assert cli.run("submit", "--name", "kept", "--", "true", env=KEEP).returncode == 0
    assert kept.stat().st_mode & 0o777 == 0o600
    for words in (["status", "kept"], ["events", "kept"], ["list", "-o", "name,state,cluster"], ["hold", "kept"]):
        compiled = cli.run(*words, PYTHONDONTWRITEBYTECODE="1")  # every class compiled, nothing kept
        from_kept = cli.run(*words, env=KEEP)
        assert _seen(from_kept) == _seen(compiled), words
    kept.write_bytes(b"\x00 not what dunscaith wrote")
    damaged = cli.run("status", "kept", env=KEEP)
    assert _seen(damaged) == _seen(cli.run("status", "kept", PYTHONDONTWRITEBYTECODE="1"))
    assert kept.read_bytes()[:1] != b"\x00"  # written again, whole, by the command that compiled over it
