"""Commands on a pipeline (issue 40): status NAME (lines and --json), list's one row, status of a step that
waits, and cancel / hold / give-up / resubmit --failed of a whole pipeline, through the CLI on the
container's fakes (the memory store). The pipeline's jobs are recorded as a pipeline submit records them
(each step's specs from ``step_jobs``), and its steps that wait for nothing are run by ``supervise``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NoReturn

import pytest

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pipelines import parse_pipeline, step_jobs
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.services.jobs.owning_host import Owner, OwningHost
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.root.container import Container
from dunscaith.entrypoints.dunscaith.root.settings_cache import HopSettings
from tests.unit.jobs.test_cli_wiring import Wired, invoke, wired
from tests.unit.jobs.test_host_binding import LOGIN1, LOGIN2
from tests.unit.jobs.test_owning_host import NeverOpened, _element
from tests.unit.jobs.test_sweep_commands import Forwarded, _far, _no_store_here

__all__ = ["wired"]  # the fixture, shared with the wiring tests

STUDY = """
name = "study"

[[step]]
name = "train"
command = "true"
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


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def _record(container: Container, text: str = STUDY, failing: tuple[str, ...] = ()) -> None:
    """Every step's job (or sweep) recorded at once, as `submit --pipeline` records them; ``failing``: the
    jobs whose command fails (the fake scheduler runs `true` well and anything else badly)."""
    pipeline = parse_pipeline(text, "study.toml")
    record_job, record_sweep = container.use_cases.record_job(), container.use_cases.record_sweep()
    for step in pipeline.order():
        specs = [
            replace(spec, command=("false",)) if spec.name in failing else spec
            for spec in step_jobs(pipeline, step, cluster="local", adapter="local", workdir=None, max_attempts=1)
        ]
        if step.is_sweep:
            record_sweep(step.job, specs)
        else:
            record_job(specs[0])


def _train(container: Container) -> None:
    """The first step's elements run to their outcomes (they wait for nothing)."""
    for index in range(3):
        invoke(container, "supervise", f"study.train-{index}")


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def _json(output: str) -> Any:
    return json.loads(output[output.index("{") :])


def test_status_of_a_pipeline_just_recorded_says_what_each_step_waits_for(wired: Wired) -> None:
    container, _, _ = wired
    _record(container)

    result = invoke(container, "status", "study")

    assert result.return_value == 0
    lines = _lines(result.stdout)
    assert lines[0] == "pipeline study: 3 steps: 2 waiting, 1 recorded  (cluster local)"
    assert lines[1].split() == ["study.train", "3", "elements:", "3", "recorded"]
    assert lines[2].split() == ["study.reduce", "waiting", "for", "study.train"]
    assert lines[3].split() == ["study.plot", "2", "elements:", "2", "waiting", "(waiting", "for", "study.reduce)"]
    assert lines[4].strip() == (
        "Unattended: 6 jobs with work left and no supervisor; reattach with: dunscaith supervise study"
    )
    assert "study.reduce" not in result.stderr  # the notice leaves out what the lines said
    assert lines[-1].strip() == "one step: dunscaith status study.train"


def test_a_failed_element_blocks_the_chain_below_it_and_the_pipeline_ends(wired: Wired) -> None:
    container, _, _ = wired
    _record(container, failing=("study.train-1",))
    _train(container)

    result = invoke(container, "status", "study")

    assert result.return_value == 1
    lines = _lines(result.stdout)
    assert lines[0] == "pipeline study: 3 steps: 1 failed, 2 blocked  (cluster local)"
    assert lines[1].split() == ["study.train", "3", "elements:", "2", "succeeded,", "1", "failed"]
    assert lines[2].split() == ["study.reduce", "blocked", "by", "study.train", "(study.train-1", "failed)"]
    assert lines[3].split()[-4:] == ["(blocked", "by", "study.reduce", "(blocked))"]
    assert lines[-1] == (
        "pipeline study: 0 of 3 steps succeeded; train failed, reduce blocked, plot blocked (dunscaith status study)"
    )


def test_status_json_of_a_pipeline_has_every_step(wired: Wired) -> None:
    container, _, _ = wired
    _record(container, failing=("study.train-1",))
    _train(container)

    body = _json(invoke(container, "status", "--json", "study").stdout)

    assert body["name"] == "study" and body["kind"] == "pipeline" and body["state"] == "failed"
    assert body["ended"] == {
        "exit_code": 1,
        "line": "pipeline study: 0 of 3 steps succeeded; train failed, "
        "reduce blocked, plot blocked (dunscaith status study)",
    }
    train, reduce, plot = body["steps"]
    assert (train["step"], train["job"], train["kind"], train["state"]) == ("train", "study.train", "sweep", "failed")
    assert train["counts"] == {"succeeded": 2, "failed": 1} and train["elements_total"] == 3
    assert [e["job"] for e in train["elements"]] == ["study.train-0", "study.train-1", "study.train-2"]
    assert reduce["kind"] == "job" and reduce["state"] == "blocked" and reduce["summary"]["job"] == "study.reduce"
    assert reduce["waits_for"] == [{"job": "study.train", "kind": "after"}]
    assert reduce["blocked_by"] == {
        "blocked_by": "study.train",
        "job": "study.train-1",
        "why": "failed",
        "line": "blocked by study.train (study.train-1 failed)",
    }
    assert plot["blocked_by"]["blocked_by"] == "study.reduce" and plot["waiting_for"] is None
    assert [e["state"] for e in plot["elements"]] == ["blocked", "blocked"]


def test_a_step_is_a_job_or_a_sweep_and_says_what_holds_it_back(wired: Wired) -> None:
    container, _, _ = wired
    _record(container)

    reduce = invoke(container, "status", "study.reduce")
    assert reduce.return_value == 0
    assert reduce.stdout.startswith("study.reduce  waiting  ")
    assert "  waiting for study.train" in reduce.stdout.splitlines()
    body = _json(invoke(container, "status", "--json", "study.reduce").stdout)
    assert body["state"] == "waiting" and body["held_back"]["waiting_for"] == "study.train"
    assert body["pipeline"] == {"name": "study", "step": "reduce"}
    plot = _lines(invoke(container, "status", "study.plot").stdout)
    assert plot[0].startswith("sweep study.plot: 2 elements: 2 waiting")
    assert plot[1].split() == ["study.plot-0", "waiting", "waiting", "for", "study.reduce"]
    events = invoke(container, "events", "study.reduce")
    assert (
        events.return_value == 0
        and "recorded: true (cluster local, local; at most 1 attempt; after study.train)" in (events.stdout)
    )
    with pytest.raises(BadInput, match=r"job study\.reduce has no attempt yet: nothing has run"):
        invoke(container, "logs", "study.reduce")


def test_list_shows_a_pipeline_as_one_row_and_expand_shows_its_jobs(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0
    assert invoke(container, "submit", "--name", "a.b", "--", "true").return_value == 0  # named like a step
    _record(container)

    _header, *rows = _lines(invoke(container, "list").stdout)

    assert [row.split()[0] for row in rows] == ["study", "a.b", "solo"]
    assert rows[0].startswith("study  pipeline of 3: 2 waiting, 1 recorded  local")
    expanded = [row.split()[0] for row in _lines(invoke(container, "list", "--expand").stdout)[1:]]
    assert sorted(expanded) == sorted(
        [
            "a.b",
            "solo",
            "study.reduce",
            "study.plot-0",
            "study.plot-1",
            "study.train-0",
            "study.train-1",
            "study.train-2",
        ]
    )
    notices = [line for line in invoke(container, "list").stderr.splitlines() if "Unattended" in line]
    assert notices == [
        "dunscaith: pipeline study: 6 jobs are Unattended (no supervisor); reattach with: dunscaith supervise study"
    ]
    waiting = [row.split()[:2] for row in _lines(invoke(container, "list", "--expand").stdout)[1:]]
    assert ["study.reduce", "waiting"] in waiting and ["study.plot-0", "waiting"] in waiting
    jobs = {j["job"]: j for j in _json(invoke(container, "list", "--json").stdout)["jobs"]}
    assert jobs["study.reduce"]["state"] == "waiting" and jobs["study.train-0"]["state"] == "recorded"
    assert jobs["study.plot-1"]["pipeline"] == {"name": "study", "step": "plot"} and jobs["solo"]["pipeline"] is None
    limited = invoke(container, "list", "--limit", "1")
    assert [row.split()[0] for row in _lines(limited.stdout)[1:]] == ["study"]
    assert "2 older jobs not shown" in limited.stderr


def test_cancel_of_a_pipeline_settles_its_waiting_steps_with_nothing_created(wired: Wired) -> None:
    container, scheduler, _ = wired
    _record(container)
    made = scheduler.count("create_held")

    result = invoke(container, "cancel", "study")

    assert result.return_value == 0, result.output
    assert result.stdout.strip() == "pipeline study: cancel: 6 confirmed"
    assert scheduler.count("create_held") == made  # nothing was created for any of them
    reduce = _json(invoke(container, "status", "--json", "study.reduce").stdout)
    assert reduce["outcome"]["result"] == "cancelled" and reduce["settled"] and reduce["attempts"] == []
    status = invoke(container, "status", "study")
    assert status.return_value == 1
    assert _lines(status.stdout)[-1].startswith("pipeline study: 0 of 3 steps succeeded; train failed")


def test_cancel_of_one_waiting_step_settles_it_and_blocks_what_waits_for_it(wired: Wired) -> None:
    container, scheduler, _ = wired
    _record(container)
    made = scheduler.count("create_held")

    result = invoke(container, "cancel", "study.reduce")

    assert result.return_value == 0 and result.stdout.startswith("job study.reduce: cancel confirmed by this command")
    assert scheduler.count("create_held") == made
    lines = _lines(invoke(container, "status", "study").stdout)
    assert lines[2].split() == ["study.reduce", "cancelled"]
    assert lines[3].split()[-4:] == ["(blocked", "by", "study.reduce", "(cancelled))"]


def test_hold_and_give_up_of_a_pipeline_ask_every_job(wired: Wired) -> None:
    container, _, _ = wired
    _record(container)

    held = invoke(container, "hold", "--json", "study")

    body = _json(held.stdout)
    assert body["pipeline"] == "study" and body["chosen"] == 6 and body["counts"]["confirmed"] == 6
    assert invoke(container, "release", "study").stdout.strip() == "pipeline study: release: 6 confirmed"


def test_resubmit_failed_of_a_pipeline_runs_the_failed_again_and_what_it_blocked_waits_again(wired: Wired) -> None:
    container, scheduler, _ = wired
    _record(container, failing=("study.train-1",))
    _train(container)
    made = scheduler.count("create_held")

    result = invoke(container, "resubmit", "study", "--failed")

    assert result.return_value == 0, result.output
    assert "pipeline study --failed: resubmit: 1 confirmed" in result.stdout
    assert "the new attempts are made by the pipeline's supervisor: dunscaith supervise study" in result.stdout
    assert "2 elements succeeded: not resubmitted" in result.stderr  # the waiting steps are not named
    assert "study.reduce" not in result.stderr
    assert scheduler.count("create_held") == made
    lines = _lines(invoke(container, "status", "study").stdout)
    assert lines[2].split() == ["study.reduce", "waiting", "for", "study.train"]


def test_a_word_names_a_job_then_a_sweep_then_a_pipeline(wired: Wired) -> None:
    container, _, _ = wired
    _record(container)

    with pytest.raises(BadInput, match="no job named stud is recorded"):
        invoke(container, "status", "stud")
    with pytest.raises(BadInput, match="no job named stud is recorded"):
        invoke(container, "cancel", "stud")
    with pytest.raises(BadInput, match="study is a pipeline: --state chooses elements of a sweep"):
        invoke(container, "status", "study", "--state", "failed")
    with pytest.raises(BadInput, match=r"give one of its steps \(study\.STEP --state recorded\)"):
        invoke(container, "cancel", "study", "--state", "recorded")
    assert invoke(container, "cancel", "study.train-0").stdout.startswith("job study.train-0: cancel confirmed")
    assert invoke(container, "cancel", "study.plot").stdout.strip() == "sweep study.plot: cancel: 2 confirmed"


def test_cancel_of_a_blocked_step_settles_it(wired: Wired) -> None:
    container, scheduler, _ = wired
    _record(container, failing=("study.train-1",))
    _train(container)
    made = scheduler.count("create_held")

    result = invoke(container, "cancel", "study.reduce")

    assert result.return_value == 0, result.output
    assert scheduler.count("create_held") == made
    reduce = _json(invoke(container, "status", "--json", "study.reduce").stdout)
    assert reduce["outcome"]["result"] == "cancelled" and reduce["settled"]
    assert _lines(invoke(container, "status", "study").stdout)[2].split() == ["study.reduce", "cancelled"]
    wide = _lines(invoke(container, "list", "--wide").stdout)[1]
    assert "pipeline study: 0 of 3 steps succeeded; train failed, reduce failed, plot blocked" in wide


@pytest.mark.parametrize("blocked", [False, True])
def test_lists_notice_counts_a_pipeline_from_its_row_as_every_other_command_counts_it(
    wired: Wired, blocked: bool
) -> None:
    # list (and status NAME) count a pipeline's Unattended jobs from the standing they read for its row;
    # every other command reads it for the notice: the same line, blocked jobs never counted
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0
    _record(container, failing=("study.train-1",) if blocked else ())
    if blocked:  # one element failed, two never ran: reduce and plot are blocked, two elements Unattended
        invoke(container, "supervise", "study.train-1")

    def told(*words: str) -> list[str]:
        return [line for line in invoke(container, *words).stderr.splitlines() if "Unattended" in line]

    expected = told("status", "solo")
    assert expected == [
        f"dunscaith: pipeline study: {2 if blocked else 6} jobs are Unattended (no supervisor); reattach with: "
        "dunscaith supervise study"
    ]
    assert told("list") == told("status") == told("list", "--expand") == expected
    assert told("list", "--limit", "1") == expected  # its row shown
    assert told("list", "--state", "succeeded") == expected  # no row of it: read for the notice


def test_the_notice_names_a_pipeline_once_and_never_while_its_supervisor_lives(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0
    _record(container)

    told = [line for line in invoke(container, "status", "solo").stderr.splitlines() if "Unattended" in line]
    assert told == [
        "dunscaith: pipeline study: 6 jobs are Unattended (no supervisor); reattach with: dunscaith supervise study"
    ]
    with container.adapters.store().lock(JobId("study")):  # the pipeline's supervisor holds its lock
        assert "Unattended" not in invoke(container, "status", "solo").stderr
        status = invoke(container, "status", "study")
        assert "Unattended" not in status.stdout + status.stderr
        assert "6 Unattended" not in invoke(container, "list").stdout


def test_a_blocked_job_is_not_unattended(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0
    _record(container, failing=("study.train-1",))
    _train(container)

    assert "Unattended" not in invoke(container, "status", "solo").stderr  # every job ended or is blocked
    reduce = invoke(container, "status", "study.reduce")
    assert reduce.stdout.startswith("study.reduce  blocked  ") and "Unattended" not in reduce.stdout
    plot = invoke(container, "status", "study.plot")
    assert "Unattended" not in plot.stdout + plot.stderr


def test_a_pipeline_recorded_on_another_host_is_found_by_its_jobs_pointers() -> None:
    pointers = InMemoryPointers()
    pointers.write(_element("studyx.reduce", LOGIN2))  # another pipeline's job: not study's
    pointers.write(_element("study.a.b", LOGIN2))  # a step's name has no '.': not study's
    where = OwningHost(pointers, LOGIN1, NeverOpened())
    assert where.of_pipeline(JobId("study")) is None
    pointers.write(_element("study.train-3", LOGIN2, "succeeded"))  # settled: found by reading every pointer
    assert where.of_pipeline(JobId("study")) == (Owner("login2", "/opt/login2/dunscaith"), JobId("study.train-3"))
    pointers.write(_element("study.reduce", LOGIN1))  # one of this host's: the record here decides for it
    assert where.of_pipeline(JobId("study")) == (Owner("login2", "/opt/login2/dunscaith"), JobId("study.train-3"))


def test_a_pipeline_whose_jobs_are_another_hosts_is_forwarded_there(
    wired: Wired, monkeypatch: pytest.MonkeyPatch
) -> None:
    container, _, pointers = wired
    _far(pointers, "far.reduce", "recorded", None)
    _far(pointers, "far.train-0", "running", "far.train")
    sent: list[tuple[str, str]] = []

    def forward(section: HopSettings, host: str, binary: str, argv: Sequence[str], job: str) -> NoReturn:
        sent.append((host, job))
        raise Forwarded()

    monkeypatch.setattr(edge, "forward_and_exit", forward)
    commands = [["status", "far"], ["status", "far", "--json"], ["cancel", "far"], ["resubmit", "far", "--failed"]]
    for command in commands:
        with pytest.raises(Forwarded):
            invoke(container, *command)
    assert sent == [("login2", "far")] * len(commands)
    opened = _no_store_here(container)  # a host with no store: found before one would be made
    with pytest.raises(Forwarded):
        invoke(container, "hold", "far")
    assert opened == [] and sent[-1] == ("login2", "far")


def test_a_sweep_named_like_a_step_is_a_sweep_row(wired: Wired) -> None:
    container, _, _ = wired
    _record(container)
    specs = [
        JobSpec(JobId(f"study.x-{i}"), "local", "local", ("true",), member=SweepMember(JobId("study.x"), i))
        for i in range(3)
    ]
    container.use_cases.record_sweep()(JobId("study.x"), specs)  # named as a step of study would be, but none

    rows = [row.split()[:4] for row in _lines(invoke(container, "list").stdout)[1:]]

    assert rows == [["study.x", "sweep", "of", "3:"], ["study", "pipeline", "of", "3:"]]
    assert "pipeline of 3: 2 waiting, 1 recorded" in invoke(container, "list").stdout  # study.x is not counted
