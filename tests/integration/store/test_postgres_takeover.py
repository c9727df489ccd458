"""A supervisor killed with SIGKILL on a PostgreSQL store: another process takes the job's lock at once and
carries the job to its outcome, with every step in the record once.

Real processes throughout: the supervisor runs in a child process on the real local scheduler (its
objects are processes owned by ``dunscaith remote run``, which outlive the supervisor), the store and
its lock on a real PostgreSQL 15.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.scheduler.local import LocalScheduler
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import OutcomeKind
from dunscaith.ports.job_store import LockBusy
from tests.expect import present
from tests.infra.postgres import PostgresTestServer

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
JOB = JobId("taken-over-1")

# The supervisor's side, shared by the child and the taker: store, local scheduler, real clock.
SUPERVISE = """
import sys, time
from datetime import timedelta
from pathlib import Path
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.scheduler.local import LocalScheduler
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from dunscaith.adapters.residual.memory import InMemoryResidualList
from dunscaith.domain.model.jobs.policy import Policy
from dunscaith.domain.services.jobs.supervise import SuperviseSettings, Supervisor
from dunscaith.domain.services.jobs.passes import supervise_one

class NoStop:
    def pending(self): return None
    def wake(self): pass

    def wait(self, seconds):
        time.sleep(max(0.0, seconds))
        return None

class Quiet:
    def committed(self, state, event): print(type(event).__name__, flush=True)
    def supervised(self, state, at): pass
    def note(self, text): pass

class NoCrash:
    def reached(self, point): pass

def supervise(url, root, job):
    store = PostgresStore.open(PostgresTarget.from_settings(url))
    scheduler = LocalScheduler(Path(root))
    supervisor = Supervisor(store, scheduler, SystemClock(), NoCrash(), Quiet(),
                            SuperviseSettings(poll=0.2, giveup=60.0, wait=10.0, drain=2.0),
                            Policy(absence_deadline=timedelta(seconds=30)), residual=InMemoryResidualList())
    with store.lock(job) as lock:
        return supervise_one(supervisor, job, lock, NoStop())
"""


def _record(url: str) -> None:
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.services.jobs.submit import RecordJob
    from tests.unit.jobs.helpers import NoCrash

    with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
        RecordJob(store, SystemClock(), NoCrash())(
            JobSpec(JOB, "local", "local", ("sh", "-c", "sleep 3; echo finished"), workdir="/tmp"))


def test_a_supervisor_killed_with_sigkill_is_taken_over_by_another_process_which_carries_the_job_on(
        postgres_server: PostgresTestServer, postgres_db: str, tmp_path: Path) -> None:
    url = postgres_server.url(postgres_db)
    root = tmp_path / "records"
    root.mkdir(mode=0o700)
    _record(url)
    child = subprocess.Popen(
        [sys.executable, "-c", SUPERVISE + f"\nsupervise({url!r}, {str(root)!r}, {JOB!r})\n"],
        stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        while (line := present(child.stdout).readline()) not in ("Released\n", ""):
            pass
        assert line == "Released\n", "the supervisor ended before it released the job"
    finally:
        child.kill()
        child.wait()
    killed = time.monotonic()
    store = PostgresStore.open(PostgresTarget.from_settings(url))
    try:
        while True:
            try:
                with store.lock(JOB):
                    took = time.monotonic() - killed
                break
            except LockBusy:  # the server ends the session as the kernel closes the socket: a deadline, no timing
                assert time.monotonic() - killed < 5, "the killed supervisor's lock was not freed"
                time.sleep(0.01)
    finally:
        store.close()
    done = subprocess.run(
        [sys.executable, "-c", SUPERVISE + f"\nend = supervise({url!r}, {str(root)!r}, {JOB!r})\n"
                                           "print('ENDING', end.ending, end.state.outcome.kind)\n"],
        capture_output=True, text=True, cwd=REPO, timeout=120)
    assert f"ENDING outcome {OutcomeKind.SUCCEEDED}" in done.stdout, done.stderr
    with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
        kinds = [line.kind for line in store.read(JOB).events]
    assert kinds.count("submitting") == 1 and kinds.count("created") == 1 and kinds.count("released") == 1
    assert kinds[-2:] == ["outcome", "settled"]
    (object_dir,) = LocalScheduler(root).base.iterdir()  # one object, run once
    assert (object_dir / "stdout").read_text() == "finished\n"
    print(f"lock taken {took * 1000:.0f} ms after SIGKILL")
