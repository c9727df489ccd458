"""Issue 22 items 10 and 11: a store that went missing, and a records.root changed, as a user meets them.

10: ``rm records.db`` then ``status seed`` used to make a new empty store and say "no job named seed is
recorded", although a pointer names the job. A store is never made where this host's pointers name
jobs: the command says what is missing, and doctor lists the pointers.
11: after records.root changes, ``status`` of a job whose pointer names the old root of this same host
said "no job named … is recorded", and doctor called the pointer "replaced or restored from an older
copy": the command now follows the pointer to that root while its HOST still binds it to this host
(and names it otherwise), and doctor names the root.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.e2e.jobs.cli import Cli

pytestmark = pytest.mark.slow


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    lines: list[str] = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    return lines[0]


def test_a_deleted_store_is_not_made_anew_while_pointers_name_it_and_doctor_lists_them(cli: Cli) -> None:
    assert cli.run("submit", "--name", "seed", "--", "true").returncode == 0
    db = cli.root / "records.db"
    for path in (db, db.with_name("records.db-wal"), db.with_name("records.db-shm")):
        path.unlink(missing_ok=True)

    line = _one_line(cli.run("status", "seed"))
    assert f"record store {db} is missing" in line and "(seed)" in line and "dunscaith doctor" in line, line
    assert not db.exists()  # nothing was made in its place
    line = _one_line(cli.run("submit", "--name", "other", "--", "true"))
    assert "is missing" in line and not db.exists()

    doctor = cli.run("doctor")
    assert doctor.returncode == 1, doctor.stderr
    assert f"PROBLEM  store: record store {db} is missing" in doctor.stdout
    assert "PROBLEM  pointer seed: names job seed of this host" in doctor.stdout
    assert "whose store is missing" in doctor.stdout and "replaced or restored" not in doctor.stdout
    assert not db.exists()

    # the user starts anew: with the pointer removed, a new store is made and says what it knows
    (cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "seed").unlink()
    gone = cli.run("status", "seed")
    assert gone.returncode == 2 and "no job named seed is recorded" in gone.stderr
    assert db.exists()


def test_a_job_of_an_earlier_records_root_of_this_host_is_followed_there(cli: Cli) -> None:
    assert cli.run("submit", "--name", "seed", "--", "true").returncode == 0
    old = cli.root
    new = cli.tmp / "records-new"

    seen = cli.run("status", "seed", "--json", DUNSCAITH_RECORDS__ROOT=str(new))
    assert seen.returncode == 0, seen.stderr
    assert json.loads(seen.stdout)["state"] == "succeeded"
    assert f"job seed is recorded in {old} on this host (its pointer says so), not in records.root {new}" \
        in seen.stderr
    assert not (new / "records.db").exists()  # nothing was made in the new root for it

    doctor = cli.run("doctor", DUNSCAITH_RECORDS__ROOT=str(new))
    assert "replaced or restored" not in doctor.stdout, doctor.stdout
    assert f"ok       pointer seed: names job seed recorded in another record root of this host, {old}" in doctor.stdout
    assert doctor.returncode == 0, doctor.stdout


def test_a_job_of_an_earlier_records_root_that_is_no_longer_this_hosts_is_named_not_followed(cli: Cli) -> None:
    assert cli.run("submit", "--name", "seed", "--", "true").returncode == 0
    old = cli.root
    new = cli.tmp / "records-new"
    host = (old / "HOST").read_text()
    (old / "HOST").write_text(host.replace('"hostname":"', '"hostname":"elsewhere-').replace(
        '"hostname": "', '"hostname": "elsewhere-'))
    line = _one_line(cli.run("status", "seed", DUNSCAITH_RECORDS__ROOT=str(new)))
    assert f"no job named seed is recorded in {new}" in line, line
    assert f"recorded in {old} on this host" in line and f"DUNSCAITH_RECORDS__ROOT={old} dunscaith status seed" in line


def test_the_hosts_scheduler_state_has_its_own_root_apart_from_the_records(cli: Cli) -> None:
    """Issue 37: records.root holds the records, scheduler_state.root this host's scheduler state (default:
    records.root, where it always lived, so that nothing moves for a user who sets only records.root)."""
    state = cli.tmp / "scheduler-state"
    apart = {"DUNSCAITH_SCHEDULER_STATE__ROOT": str(state)}
    done = cli.run("submit", "--name", "apart", "--", "echo", "from-apart", env=apart)
    assert done.returncode == 0, done.stderr
    assert (cli.root / "records.db").exists()
    assert not (cli.root / "local-scheduler").exists()  # the records' root holds no scheduler state
    [obj] = (state / "local-scheduler").iterdir()
    assert (obj / "stdout").read_text() == "from-apart\n"
    logs = cli.run("logs", "apart", env=apart)  # the job's output is found where its object is
    assert logs.returncode == 0 and "from-apart" in logs.stdout, logs.stderr

    assert cli.run("submit", "--name", "beside", "--", "true").returncode == 0  # unset: records.root, as before
    assert [p.name for p in (cli.root / "local-scheduler").iterdir()]
