"""Commands on a sweep as a user runs them: the real console script over SQLite (issue 23).

The sweep is recorded through the store's own port, element by element, as `submit --array` records one:
exp-0..2 succeeded, exp-3 failed, exp-4 recorded and never supervised. An element is an ordinary job and
works today; what asks the store for one sweep's elements (`status exp`, `list`'s one row, `cancel exp
--state S`, `resubmit exp --failed`) needs the SQLite store to keep the sweep beside each summary.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.sweeps import SweepMember
from tests.e2e.jobs.cli import Cli

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _ran(index: int, state: str, code: int) -> list[ev.Event]:
    oid = ObjectId(f"90{index}")
    result = "succeeded" if code == 0 else "failed"
    return [ev.Submitting(1, Nonce(f"n{index}")), ev.Created(1, oid), ev.Confirmed(1, oid),
            ev.Released(1, oid, None, None), ev.Observed(1, oid, state, code, None, ""),
            ev.OutcomeReached(result, "exit code 0" if code == 0 else f"failed, exit code {code}"), ev.Settled()]


def _sweep(cli: Cli) -> None:
    stories = [_ran(0, "completed", 0), _ran(1, "completed", 0), _ran(2, "completed", 0), _ran(3, "failed", 3), []]
    with SqliteStore.open(cli.root, SystemHost()) as store, store.batch():
        for index, story in enumerate(stories):
            job = JobId(f"exp-{index}")
            spec = JobSpec(job, "local", "local", ("true",), max_attempts=1, member=SweepMember(JobId("exp"), index))
            store.create(job, T0, *ev.encode(ev.JobRecorded.of(spec, store.identity())))
            for n, event in enumerate(story, start=1):
                store.append(job, T0 + timedelta(seconds=n), *ev.encode(event))


def test_an_element_is_an_ordinary_job(cli: Cli) -> None:
    _sweep(cli)

    shown = cli.run("status", "exp-3")
    assert shown.returncode == 1 and shown.stdout.startswith("exp-3  failed"), shown.stdout + shown.stderr
    body = cli.status("exp-3")
    assert (body["sweep"], body["sweep_index"]) == ("exp", 3)
    cancelled = cli.run("cancel", "exp-4")
    assert cancelled.returncode == 0 and "cancel confirmed by this command" in cancelled.stdout, cancelled.stderr
    assert cli.status("exp-4")["outcome"]["result"] == "cancelled"


def test_resubmit_of_a_failed_element_reopens_it_for_its_next_attempt(cli: Cli) -> None:
    _sweep(cli)

    done = cli.run("resubmit", "exp-3", "--json")

    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["answer"] == "confirmed"
    body = cli.status("exp-3")
    assert body["state"] == "resubmitted" and body["outcome"] is None and not body["settled"]
    refused = cli.run("resubmit", "exp-0")
    assert refused.returncode == 2 and "exp-0 succeeded: not resubmitted" in refused.stderr


def test_status_of_a_sweep_counts_its_elements(cli: Cli) -> None:
    _sweep(cli)

    done = cli.run("status", "exp")

    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[0] == "sweep exp: 5 elements: 3 succeeded, 1 failed, 1 recorded  (cluster local)"
    body = json.loads(cli.run("status", "exp", "--json").stdout)
    assert [e["job"] for e in body["elements"]] == [f"exp-{i}" for i in range(5)]


def test_list_shows_a_sweep_as_one_row(cli: Cli) -> None:
    _sweep(cli)

    rows = cli.run("list").stdout.splitlines()[1:]

    assert len(rows) == 1 and rows[0].startswith("exp   sweep of 5: 3 succeeded, 1 failed, 1 recorded")
    assert len(cli.run("list", "--expand").stdout.splitlines()[1:]) == 5


def test_commands_on_a_sweep_and_resubmit_failed(cli: Cli) -> None:
    _sweep(cli)

    given_up = cli.run("give-up", "exp", "--state", "recorded")
    assert given_up.returncode == 0 and "give-up: 1 confirmed" in given_up.stdout, given_up.stderr
    again = cli.run("resubmit", "exp", "--failed")
    # exp-3 failed; exp-4, given up before its first attempt, failed too ("given up by the user ..."): both
    # run again, under the supervisor `supervise exp` is
    assert again.returncode == 0 and "resubmit: 2 confirmed" in again.stdout, again.stderr
    assert "3 elements succeeded: not resubmitted" in again.stderr
    carried = cli.run("supervise", "exp")
    assert carried.returncode == 0 and "sweep exp: all 5 succeeded" in carried.stdout, carried.stderr
    states = {e["job"]: e["state"] for e in json.loads(cli.run("status", "exp", "--json").stdout)["elements"]}
    assert states == {f"exp-{i}": "succeeded" for i in range(5)}


def test_a_command_on_one_job_given_a_sweeps_name_says_what_to_type_instead(cli: Cli) -> None:
    _sweep(cli)
    for words in (["logs", "exp"], ["logs", "exp", "--all"], ["events", "exp"], ["watch", "exp"]):
        done = cli.run(*words)
        assert done.returncode == 2, done.stderr
        assert done.stderr == ("dunscaith: exp is a sweep of 5 elements, not one job: name one element (exp-0), or "
                               "see them all with: dunscaith status exp\n"), words
        assert done.stdout == ""
    nothing = cli.run("logs", "nothing")
    assert nothing.returncode == 2 and nothing.stderr == "dunscaith: no job named nothing is recorded\n"
