"""kill -9 of a pipeline's supervisor, then ``dunscaith supervise NAME``: train (a sweep 0-2) -> reduce -> plot
on the local scheduler, as real processes (issue 40).

``dunscaith submit --pipeline FILE`` records it and supervises it, and is killed with SIGKILL: at the
durable steps between train's last outcome and reduce's create (``outcome-committed``,
``settled-committed``, ``start-decided``), mid-create of reduce (``submitting-committed``,
``create-answered``, ``answer-committed``, ``release-sent``), the same for plot, and at random moments
(the reattached ``supervise NAME`` killed too in some). Then ``supervise NAME`` again, to the end. Every
command appends one line to a file (so the file has one line per job that ran); reduce's command checks
that every train element's output file is there and fails otherwise (reduce never ran before train
succeeded); the pipeline ends with exit 0.

The whole series (14 crash points, 10 random moments) runs with ``DUNSCAITH_ALL_TRIALS=1``; the suite runs
3 of each, to keep CI under its 30 minutes on 2 cores (docs/architecture.md "Tests").
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
from collections import Counter

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.objects import ObjectState
from tests.e2e.jobs.cli import DUNSCAITH, Cli, await_condition

pytestmark = pytest.mark.slow

ALL = os.environ.get("DUNSCAITH_ALL_TRIALS") == "1"

JOBS = ("study.train-0", "study.train-1", "study.train-2", "study.reduce", "study.plot")
LINES = Counter({"train-0": 1, "train-1": 1, "train-2": 1, "reduce": 1, "plot": 1})

# The local scheduler sends each element on its own, so the n-th time a point is reached: 1-3 train's
# elements, 4 reduce, 5 plot (a point reached once per job). Train's last outcome is the third.
# each point, and where the kill leaves the record: (train's elements with an outcome, reduce's last event,
# plot's last event; None: not checked), so each trial is known to have killed where it says
POINTS: dict[str, tuple[int, str | None, str | None]] = {
    "outcome-committed#3": (3, "job-recorded", "job-recorded"),  # train's last outcome, reduce not yet asked for
    "settled-committed#3": (3, None, "job-recorded"),
    "start-decided#4": (3, "job-recorded", "job-recorded"),  # reduce's first attempt decided, nothing recorded
    "submitting-committed#4": (3, "submitting", "job-recorded"),  # reduce's intent durable, its create not sent
    "create-answered#4": (3, "submitting", "job-recorded"),  # reduce's object made held, the answer not recorded
    "answer-committed#4": (3, "created", "job-recorded"),
    "release-sent#4": (3, "confirmed", "job-recorded"),  # reduce released, the release not recorded
    "release-committed#4": (3, "released", "job-recorded"),
    "outcome-committed#4": (3, "outcome", "job-recorded"),  # reduce's outcome durable, plot not yet asked for
    "start-decided#5": (3, None, "job-recorded"),
    "submitting-committed#5": (3, None, "submitting"),
    "create-answered#5": (3, None, "submitting"),
    "answer-committed#5": (3, None, "created"),
    "release-sent#5": (3, None, "confirmed"),
}
CI_POINTS = ["start-decided#4", "create-answered#4", "release-sent#4"]  # one before, two mid-create
RANDOM_TRIALS = 10 if ALL else 3


def study(cli: Cli, *, fail: str | None = None, cluster: str | None = None) -> str:
    """The pipeline's file (its path): each command appends its line to ``ran``; reduce fails unless every
    train element's output is there; ``fail``: a train element that fails (exit 3) without its output."""
    ran, out = cli.tmp / "ran", cli.tmp / "out"
    out.mkdir(exist_ok=True)
    train = f"sleep 0.3; echo train-{{}} >> {ran} && touch {out}/train-{{}}"
    if fail is not None:
        train = f"if [ {{}} = {fail} ]; then echo train-{{}} >> {ran}; exit 3; fi; {train}"
    checks = " && ".join(f"test -f {out}/train-{i}" for i in range(3))
    path = cli.tmp / "study.toml"
    path.write_text(f"""
name = "study"
{f'cluster = "{cluster}"' if cluster else ""}
[[step]]
name = "train"
command = ["sh", "-c", "{train}"]
array = "0-2"
[[step]]
name = "reduce"
command = ["sh", "-c", "echo reduce >> {ran}; {checks}"]
after = ["train"]
[[step]]
name = "plot"
command = ["sh", "-c", "echo plot >> {ran}"]
after = ["reduce"]
""")
    return str(path)


def ran(cli: Cli) -> Counter[str]:
    path = cli.tmp / "ran"
    return Counter(path.read_text().split()) if path.exists() else Counter()


def killed_after(cli: Cli, args: list[str], delay: float, *, once_recorded: bool = False) -> int | None:
    """dunscaith with ``args`` in its own process group, SIGKILLed (the group) after ``delay`` s (counted
    from when the pipeline's jobs are recorded, with ``once_recorded``); its exit code, or None if it was
    killed. (A kill of the first command of a record root while it creates the store leaves an empty
    records.db that every later command refuses: not a pipeline's matter, so these trials kill later.)"""
    proc = subprocess.Popen(
        [DUNSCAITH, *args],
        env=cli.env(NO_COLOR="1"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=cli.tmp,
        start_new_session=True,
    )
    if once_recorded:
        await_condition(
            lambda: proc.poll() is not None or cli.run("status", "study.plot").returncode == 0,
            timeout=120,
            what="the pipeline recorded",
        )
    try:
        code = proc.wait(delay)
        return None if code == -signal.SIGKILL else code
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def carried_on(cli: Cli, file: str, timeout: float = 180) -> None:
    """``supervise study`` to the end: exit 0, every job succeeded and ran once (one line each), reduce
    after train (its check passed) and plot after reduce. Killed before the pipeline was recorded (all of
    it or nothing): nothing ran, and ``submit --pipeline`` again runs it."""
    last = cli.run("supervise", "study", timeout=timeout, NO_COLOR="1")
    if last.returncode == 2 and "named study is recorded" in last.stderr:  # "no job named study is recorded"
        assert ran(cli) == Counter()
        last = cli.run("submit", "--pipeline", file, timeout=timeout, NO_COLOR="1")
    assert last.returncode == 0, last.stdout[-3000:] + last.stderr[-2000:]
    assert "pipeline study: all 3 steps succeeded" in last.stdout + last.stderr, last.stdout[-2000:]
    assert ran(cli) == LINES
    for job in JOBS:
        assert cli.status(job)["state"] == "succeeded", job


def check_once_in_order(cli: Cli, file: str) -> None:
    """``carried_on``, and on the local scheduler one object released for each job."""
    carried_on(cli, file)
    objects = LocalScheduler(cli.root).query([JobId(j) for j in JOBS], confirm_absent=True).objects
    released = Counter(o.name for o in objects if o.state is not ObjectState.HELD)
    assert released == Counter(JOBS), [(o.name, o.object_id, o.state) for o in objects]


def killed_where(cli: Cli) -> tuple[int, str, str]:
    """Where the record stands: train's elements with an outcome, reduce's last event, plot's last event."""
    with SqliteStore.open(cli.root, SystemHost()) as store:
        kinds = {job: [e.kind for e in store.read(JobId(job)).events] for job in JOBS}
    return (sum("outcome" in kinds[job] for job in JOBS[:3]), kinds["study.reduce"][-1], kinds["study.plot"][-1])


@pytest.mark.parametrize("point", list(POINTS) if ALL else CI_POINTS)
def test_a_kill_between_a_steps_outcome_and_the_next_create_never_creates_early_or_twice(cli: Cli, point: str) -> None:
    file = study(cli)
    crashed = cli.run("submit", "--pipeline", file, timeout=180, DUNSCAITH_TEST_CRASH_AT=point)
    assert crashed.returncode == -signal.SIGKILL, (point, crashed.stdout[-2000:], crashed.stderr[-2000:])
    where, expected = killed_where(cli), POINTS[point]
    assert all(e is None or w == e for w, e in zip(where, expected, strict=True)), (point, where)
    check_once_in_order(cli, file)


@pytest.mark.parametrize("trial", range(RANDOM_TRIALS))
def test_kills_at_random_moments_never_create_early_or_twice(cli: Cli, trial: int) -> None:
    rng = random.Random(40_000 + trial)  # the moments differ between trials, the same in every run
    file = study(cli)
    # submit killed, then (one trial in two) the supervise that reattaches killed too
    for n, args in enumerate([["submit", "--pipeline", file], ["supervise", "study"]][: rng.choice((1, 2))]):
        if killed_after(cli, args, rng.uniform(0.0, 3.0), once_recorded=n == 0) is not None:
            break  # it ended first: nothing left to kill
    check_once_in_order(cli, file)


def test_a_failed_train_element_blocks_reduce_and_plot_and_nothing_is_created_for_them(cli: Cli) -> None:
    done = cli.run("submit", "--pipeline", study(cli, fail="1"), timeout=180, NO_COLOR="1")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "study.reduce" in said and "blocked by study.train (study.train-1 failed)" in said, said[-3000:]
    assert ran(cli) == Counter({"train-0": 1, "train-1": 1, "train-2": 1})  # reduce and plot never ran
    objects = LocalScheduler(cli.root).query([JobId(j) for j in JOBS], confirm_absent=True).objects
    assert {o.name for o in objects} <= {"study.train-0", "study.train-1", "study.train-2"}
    status = cli.run("status", "study.reduce")
    assert status.returncode in (0, 1), status.stderr
    assert "blocked by study.train (study.train-1 failed)" in status.stdout, status.stdout
    plot = cli.run("status", "study.plot")
    assert "blocked by study.reduce" in plot.stdout, plot.stdout
    again = cli.run("supervise", "study", timeout=180, NO_COLOR="1")  # reattached: still blocked, nothing made
    assert again.returncode == 1, again.stdout[-2000:] + again.stderr[-2000:]
    assert ran(cli) == Counter({"train-0": 1, "train-1": 1, "train-2": 1})
