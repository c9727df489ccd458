"""``dunscaith stop --emergency JOB``: no record, no lock, no SSH; every object of the name, running too."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal

import pytest

from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState
from tests.e2e.jobs.cli import Cli, await_condition, await_state

pytestmark = pytest.mark.slow


def _running_job_then_owner_gone(cli: Cli, job: str) -> None:
    """A job running under a supervisor that was then killed, and its record (store, HOST) deleted."""
    supervisor = cli.start("submit", "--name", job, "--", "sleep", "300")
    try:
        await_state(cli, job, "running", timeout=60)
    except AssertionError as exc:
        if supervisor.poll() is not None:  # the supervisor ended early: its own words say why
            _, err = supervisor.communicate()
            raise AssertionError(f"{exc}; supervisor exited {supervisor.returncode}: {err[-2000:]}") from None
        raise
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(supervisor.pid, signal.SIGKILL)
        supervisor.wait()
    for entry in cli.root.iterdir():  # the record is gone; the local scheduler's objects stay
        if entry.name != "local-scheduler":
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()


def test_emergency_stop_with_the_record_deleted_stops_the_running_object(cli: Cli) -> None:
    _running_job_then_owner_gone(cli, "runaway")
    done = cli.run("stop", "--emergency", "runaway")
    assert done.returncode == 0, (done.stdout, done.stderr)
    (obj,) = LocalScheduler(cli.root).query([JobId("runaway")], confirm_absent=True).objects
    assert f"stopped 1 object(s) of runaway on cluster local: {obj.object_id}" in done.stdout
    await_condition(lambda: LocalScheduler(cli.root).view(obj.object_id).state in ENDED, what="the object to end")
    assert LocalScheduler(cli.root).view(obj.object_id).state is ObjectState.CANCELLED
    assert sorted(os.listdir(cli.root)) == ["local-scheduler"]  # no store was opened, none made
    assert cli.run("status", "runaway").returncode == 2  # there is no record of it any more
    again = json.loads(cli.run("stop", "--emergency", "runaway", "--json").stdout)
    assert again == {"job": "runaway", "cluster": "local", "stopped": [], "problem": None}


def test_emergency_stop_reads_no_pointer_it_cannot_use_and_refuses_bad_input(cli: Cli) -> None:
    pointers = cli.tmp / "home" / ".config" / "dunscaith" / "jobs"
    pointers.mkdir(parents=True)
    (pointers / "ghost").write_text("{damaged")
    done = cli.run("stop", "--emergency", "ghost")
    assert done.returncode == 0 and "nothing of ghost to stop on cluster local" in done.stdout
    for args, says in [(["stop", "ghost"], "stop needs --emergency"),
                       (["stop", "--emergency", "a/b"], "job name"),
                       (["stop", "--emergency", "ghost", "--cluster", "mars"], "no cluster named 'mars'")]:
        refused = cli.run(*args)
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
