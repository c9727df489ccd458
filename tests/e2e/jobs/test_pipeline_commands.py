"""Commands on a pipeline as a user runs them: the real console script over SQLite on the local scheduler
(issue 40).

The pipeline is recorded through the store's own port, as a pipeline submit records it (every step's jobs,
``step_jobs``, in one batch): study.train-0..2 ran (train-1 failed, or none did), study.reduce waits for
study.train, study.plot (a sweep of 2) for study.reduce. Nothing of reduce or plot was ever created.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import Nonce, ObjectId
from dunscaith.domain.model.jobs.pipelines import parse_pipeline, step_jobs
from tests.e2e.jobs.cli import Cli
from tests.infra.postgres import PostgresTestServer

T0 = datetime(2026, 1, 1, tzinfo=UTC)
STUDY = """
name = "study"

[[step]]
name = "train"
command = "true {}"
array = "0-2"

[[step]]
name = "reduce"
command = "true"
after = ["train"]

[[step]]
name = "plot"
command = "true"
array = "0-1"
after = ["reduce"]
"""


def _ran(index: int, code: int) -> list[ev.Event]:
    oid = ObjectId(f"90{index}")
    result = "succeeded" if code == 0 else "failed"
    return [
        ev.Submitting(1, Nonce(f"n{index}")),
        ev.Created(1, oid),
        ev.Confirmed(1, oid),
        ev.Released(1, oid, None, None),
        ev.Observed(1, oid, "completed" if code == 0 else "failed", code, None, ""),
        ev.OutcomeReached(result, "exit code 0" if code == 0 else f"failed, exit code {code}"),
        ev.Settled(),
    ]


def _pipeline(cli: Cli, *, ran: bool = True) -> None:
    pipeline = parse_pipeline(STUDY, "study.toml")
    stories = {"study.train-0": _ran(0, 0), "study.train-1": _ran(1, 3), "study.train-2": _ran(2, 0)} if ran else {}
    with SqliteStore.open(cli.root, SystemHost()) as store, store.batch():
        for step in pipeline.order():
            for spec in step_jobs(pipeline, step, cluster="local", adapter="local", workdir=None, max_attempts=1):
                store.create(spec.name, T0, *ev.encode(ev.JobRecorded.of(spec, store.identity())))
                for n, event in enumerate(stories.get(spec.name, []), start=1):
                    store.append(spec.name, T0 + timedelta(seconds=n), *ev.encode(event))


def test_status_of_a_pipeline_says_each_step_and_how_it_ended(cli: Cli) -> None:
    _pipeline(cli)

    done = cli.run("status", "study")

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "pipeline study: 3 steps: 1 failed, 2 blocked  (cluster local)"
    assert lines[1].split() == ["study.train", "3", "elements:", "2", "succeeded,", "1", "failed"]
    assert lines[2].split() == ["study.reduce", "blocked", "by", "study.train", "(study.train-1", "failed)"]
    assert lines[-1] == (
        "pipeline study: 0 of 3 steps succeeded; train failed, reduce blocked, plot blocked (dunscaith status study)"
    )
    body = json.loads(cli.run("status", "study", "--json").stdout)
    assert body["kind"] == "pipeline" and body["state"] == "failed"
    assert [(s["step"], s["kind"], s["state"]) for s in body["steps"]] == [
        ("train", "sweep", "failed"),
        ("reduce", "job", "blocked"),
        ("plot", "sweep", "blocked"),
    ]
    assert body["steps"][1]["blocked_by"]["job"] == "study.train-1"


def test_a_waiting_step_says_what_it_waits_for_and_list_shows_one_row(cli: Cli) -> None:
    _pipeline(cli, ran=False)

    reduce = cli.run("status", "study.reduce")
    assert reduce.returncode == 0, reduce.stderr
    assert reduce.stdout.startswith("study.reduce  waiting  ") and "  waiting for study.train\n" in reduce.stdout
    assert cli.status("study.reduce")["held_back"]["waiting_for"] == "study.train"
    rows = cli.run("list").stdout.splitlines()[1:]
    assert len(rows) == 1 and rows[0].startswith("study  pipeline of 3: 2 waiting, 1 recorded  local"), rows
    expanded = sorted(row.split()[0] for row in cli.run("list", "--expand").stdout.splitlines()[1:])
    assert expanded == [
        "study.plot-0",
        "study.plot-1",
        "study.reduce",
        "study.train-0",
        "study.train-1",
        "study.train-2",
    ]
    events = cli.run("events", "study.reduce")
    assert events.returncode == 0 and "recorded: true" in events.stdout, events.stderr
    for command in ("events", "logs"):  # a command of one job given the pipeline's name says what to name
        whole = cli.run(command, "study")
        assert whole.returncode == 2 and whole.stderr == (
            "dunscaith: study is a pipeline of 3 steps, not one job: name one step (study.reduce), or see them "
            "all with: dunscaith status study\n"
        ), whole.stderr


def test_cancel_of_a_waiting_step_settles_it_with_nothing_created(cli: Cli) -> None:
    _pipeline(cli, ran=False)

    done = cli.run("cancel", "study.reduce")

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("job study.reduce: cancel confirmed by this command")
    body = cli.status("study.reduce")
    assert body["outcome"]["result"] == "cancelled" and body["settled"] and body["attempts"] == []
    lines = cli.run("status", "study").stdout.splitlines()
    assert lines[2].split() == ["study.reduce", "cancelled"]
    assert lines[3].split()[-4:] == ["(blocked", "by", "study.reduce", "(cancelled))"]
    whole = cli.run("cancel", "study")
    assert (
        whole.returncode == 2
        and whole.stdout.strip() == "pipeline study: cancel: 5 confirmed, 1 refused (already ended)"
    ), whole.stdout + whole.stderr


ROUND_TRIP = """\
name = "rt"

[[step]]
name = "train"
command = ["sh", "-c", "test {} != 1 || test -e fixed"]
array = "0-2"

[[step]]
name = "reduce"
command = "true"
after = ["train"]
"""


@pytest.mark.slow
def test_a_failed_element_resubmitted_unblocks_what_waited_and_the_pipeline_finishes(cli: Cli) -> None:
    (cli.tmp / "rt.toml").write_text(ROUND_TRIP)
    failed = cli.run("submit", "--pipeline", "rt.toml", timeout=180)
    assert failed.returncode == 1, failed.stderr
    shown = cli.run("status", "rt")
    assert shown.returncode == 1 and "rt.reduce  blocked by rt.train (rt.train-1 failed)" in shown.stdout

    (cli.tmp / "fixed").write_text("")
    again = cli.run("resubmit", "rt", "--failed")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "pipeline rt --failed: resubmit: 1 confirmed" in again.stdout
    waiting = cli.run("status", "rt").stdout.splitlines()
    assert waiting[2].split() == ["rt.reduce", "waiting", "for", "rt.train"], waiting
    done = cli.run("supervise", "rt", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert cli.run("status", "rt").stdout.splitlines()[-1] == "pipeline rt: all 2 steps succeeded"
    settled = cli.run("reconcile", "rt", timeout=180)  # nothing left: it says how the pipeline ended
    assert settled.returncode == 0 and "pipeline rt: all 2 steps succeeded" in settled.stdout, settled.stderr


@pytest.mark.postgres
@pytest.mark.slow
def test_status_list_and_resubmit_of_a_pipeline_on_postgresql(
    cli: Cli, postgres_server: PostgresTestServer, postgres_db: str
) -> None:
    env = {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": postgres_server.url(postgres_db)}
    (cli.tmp / "rt.toml").write_text(ROUND_TRIP)
    failed = cli.run("submit", "--pipeline", "rt.toml", timeout=180, env=env)
    assert failed.returncode == 1, failed.stderr

    shown = cli.run("status", "rt", env=env)
    assert shown.returncode == 1 and "rt.reduce  blocked by rt.train (rt.train-1 failed)" in shown.stdout
    assert json.loads(cli.run("status", "rt", "--json", env=env).stdout)["state"] == "failed"
    rows = cli.run("list", env=env).stdout.splitlines()[1:]
    assert len(rows) == 1 and rows[0].split()[:8] == ["rt", "pipeline", "of", "2:", "1", "failed,", "1", "blocked"], (
        rows
    )
    (cli.tmp / "fixed").write_text("")
    again = cli.run("resubmit", "rt", "--failed", env=env)
    assert again.returncode == 0 and "pipeline rt --failed: resubmit: 1 confirmed" in again.stdout, again.stderr
    assert cli.run("supervise", "rt", timeout=180, env=env).returncode == 0
    assert cli.run("status", "rt", env=env).stdout.splitlines()[-1] == "pipeline rt: all 2 steps succeeded"
