"""Issue 37: a scheduler kind, and a store kind, is its package plus one registration line, through the
real front door.

The pbs scheduler kind (tests/fixtures/pbs) and the scratch store kind (tests/fixtures/scratch) are each
registered by one line in front of the console script's ``main`` (``dunscaith_with_pbs.py``,
``dunscaith_with_scratch.py``); ``submit``, ``status`` and ``list`` then run on it, each in a process of
its own: on pbs, ``submit`` is the typer app's (a --cluster line) and ``status``/``list`` the front door's
plain reads (without typer); on scratch, every line goes to the app (the plain paths take SQLite only).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def hpc(cli: Cli) -> Cli:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[clusters.hpc]\nadapter = "pbs"\nserver = "pbs1.example"\n')
    return cli


def with_pbs(cli: Cli, *args: str, python: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """The console script's ``main`` with the pbs kind's registration line before it."""
    return subprocess.run([sys.executable, *python, "-m", "tests.fixtures.pbs.dunscaith_with_pbs", *args],
                          env=cli.env(PYTHONPATH=str(REPO)), capture_output=True, text=True, timeout=90, cwd=cli.tmp)


def with_scratch(cli: Cli, *args: str) -> subprocess.CompletedProcess[str]:
    """The console script's ``main`` with the scratch store kind's registration line before it."""
    return subprocess.run([sys.executable, "-m", "tests.fixtures.scratch.dunscaith_with_scratch", *args],
                          env=cli.env(PYTHONPATH=str(REPO), DUNSCAITH_RECORDS__BACKEND="scratch"),
                          capture_output=True, text=True, timeout=90, cwd=cli.tmp)


def test_a_kind_registered_by_one_line_submits_and_reads_through_the_front_door(hpc: Cli) -> None:
    done = with_pbs(hpc, "submit", "--cluster", "hpc", "--name", "on-pbs", "-c", "2", "-p", "short",
                    "--scheduler-option=-m=abe", "--", "true")
    assert done.returncode == 0, done.stderr
    assert "outcome: succeeded" in done.stdout
    [qsub] = [json.loads(line) for line in (hpc.root / "pbs-qsub").read_text().splitlines()]
    assert qsub["server"] == "pbs1.example"  # its own table, validated by its own model
    assert qsub["qsub"][:6] == ["-h", "-N", "on-pbs", "-q", "short", "-l"] and "-m=abe" in qsub["qsub"]

    status = with_pbs(hpc, "status", "on-pbs")  # the front door's plain read: its scheduler opened by its kind
    assert (status.returncode, status.stderr) == (0, ""), status.stderr
    assert "cluster hpc (pbs)" in status.stdout and "succeeded" in status.stdout
    as_json = json.loads(with_pbs(hpc, "status", "on-pbs", "--json").stdout)
    assert as_json["cluster"] == "hpc" and as_json["state"] == "succeeded"
    assert as_json["scheduler_times_problem"] is None  # its scheduler was opened and asked (it knew no times)
    listed = with_pbs(hpc, "list")
    assert listed.returncode == 0 and "on-pbs" in listed.stdout and "hpc" in listed.stdout
    [row] = json.loads(with_pbs(hpc, "list", "--json").stdout)["jobs"]
    assert row["job"] == "on-pbs" and row["cluster"] == "hpc"
    # status and list were parsed by typer (as every line is) and made their parts by wiring.Root, which never
    # imports dependency-injector
    for args in (["status", "on-pbs"], ["list"]):
        imported = with_pbs(hpc, *args, python=("-X", "importtime")).stderr
        assert re.search(r"\| +typer\.main$", imported, re.M), args
        assert "dunscaith.entrypoints.dunscaith.status_list" in imported, args
        assert not re.search(r"\| +dependency_injector$", imported, re.M), args


def test_without_its_registration_line_the_console_script_refuses_the_kind(hpc: Cli) -> None:
    for args in (["list"], ["status", "on-pbs"], ["submit", "--cluster", "hpc", "--", "true"]):
        done = hpc.run(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "clusters.hpc.adapter" in done.stderr and "'local', 'slurm' or 'gridengine'" in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_store_kind_registered_by_one_line_records_and_reads_through_the_front_door(cli: Cli) -> None:
    done = with_scratch(cli, "submit", "--name", "kept", "--", "true")
    assert done.returncode == 0, done.stderr
    assert "outcome: succeeded" in done.stdout
    assert (cli.root / "scratch-opened").read_text()  # opened by its kind
    status = with_scratch(cli, "status", "kept")
    assert status.returncode == 0 and "succeeded" in status.stdout, status.stderr
    [row] = json.loads(with_scratch(cli, "list", "--json").stdout)["jobs"]
    assert row["job"] == "kept" and row["state"] == "succeeded"
    doctor = with_scratch(cli, "doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert len((cli.root / "scratch-opened").read_text().splitlines()) >= 4  # by every command


def test_without_its_registration_line_the_store_kind_is_refused_naming_the_kinds(cli: Cli) -> None:
    for args in (["list"], ["status", "kept"], ["submit", "--", "true"]):
        done = cli.run(*args, DUNSCAITH_RECORDS__BACKEND="scratch")
        assert done.returncode == 2, (args, done.stderr)
        assert "records.backend: must be 'sqlite' or 'postgresql', not 'scratch'" in done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert not cli.root.exists()  # nothing made
