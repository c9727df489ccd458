"""Commands on a sweep (issue 23): status, list, the job commands and resubmit --failed on a sweep NAME,
its elements NAME-7 and NAME --state S, through the CLI on the container's fakes (the memory store, which
asks for one sweep's elements as the SQL stores will once they keep the sweep with each summary)."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, NoReturn

import pytest
from dependency_injector import providers

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.store.memory import InMemoryStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.record import HostIdentity, JobRecord, LoopHealth
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Action, label
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.services.jobs.commands import Answer, Answerer, JobCommands
from dunscaith.domain.services.jobs.submit import RecordJob
from dunscaith.domain.services.jobs.sweep_commands import SweepCommands
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.root.container import Container
from dunscaith.entrypoints.dunscaith.root.settings_cache import HopSettings
from tests.unit.jobs.helpers import NoCrash, Rig, StopAfter, rig
from tests.unit.jobs.test_cli_wiring import Wired, invoke, wired

__all__ = ["wired"]  # the fixture, shared with the wiring tests

# exp-0..2 succeed, exp-3 fails, exp-4 is recorded and never supervised (Unattended)
COMMANDS = [("true",), ("true",), ("true",), ("false",), ("true",)]


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)


def _sweep(container: Container, name: str = "exp", supervised: int = 4) -> None:
    """A sweep recorded element by element (as `submit --array` records one), the first ``supervised``
    elements run to their outcomes by `supervise` (one each: the sweep's own supervisor is not here yet)."""
    record = container.use_cases.record_job()
    for index, command in enumerate(COMMANDS):
        record(JobSpec(JobId(f"{name}-{index}"), "local", "local", command, max_attempts=1,
                       member=SweepMember(JobId(name), index, 2)))
    for index in range(supervised):
        invoke(container, "supervise", f"{name}-{index}")


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


def _json(output: str) -> Any:
    return json.loads(output[output.index("{"):])


def test_status_of_a_sweep_counts_its_elements_and_lists_each_that_has_not_succeeded(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    result = invoke(container, "status", "exp")

    assert result.return_value == 1  # an element failed
    lines = _lines(result.stdout)
    assert lines[0] == "sweep exp: 5 elements: 3 succeeded, 1 failed, 1 recorded  (cluster local)"
    assert lines[1].split() == ["exp-3", "failed", "failed,", "exit", "code", "1"]
    assert lines[2].split() == ["exp-4", "recorded"]
    assert "1 element with work left and no supervisor; reattach with: dunscaith supervise exp" in lines[3]
    assert lines[4].strip() == "one element: dunscaith status exp-3"


def test_status_of_a_sweep_with_a_state_lists_its_elements_in_that_state(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    listed = [line.split()[0] for line in _lines(invoke(container, "status", "exp", "--state", "succeeded").stdout)]

    assert listed[1:4] == ["exp-0", "exp-1", "exp-2"]
    none = invoke(container, "status", "exp", "--state", "running")
    assert "no element is running" in none.stdout and none.return_value == 1


def test_status_json_of_a_sweep_has_every_element(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    body = _json(invoke(container, "status", "--json", "exp").stdout)

    assert body["sweep"] == "exp" and body["elements_total"] == 5
    assert body["counts"] == {"succeeded": 3, "failed": 1, "recorded": 1}
    assert [e["job"] for e in body["elements"]] == [f"exp-{i}" for i in range(5)]
    assert [e["index"] for e in body["elements"]] == list(range(5))
    failed = body["elements"][3]
    assert failed["outcome"] == {"result": "failed", "detail": "failed, exit code 1"} and failed["settled"]
    assert body["unattended"] == ["exp-4"]
    chosen = _json(invoke(container, "status", "--json", "exp", "--state", "failed").stdout)
    assert [e["job"] for e in chosen["elements"]] == ["exp-3"] and chosen["state"] == "failed"


def test_an_element_is_an_ordinary_job_and_status_of_nothing_says_so(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0

    element = invoke(container, "status", "exp-3")
    assert element.return_value == 1 and element.stdout.startswith("exp-3  failed")
    assert _json(invoke(container, "status", "--json", "exp-3").stdout)["sweep"] == "exp"
    with pytest.raises(BadInput, match="no job named nope is recorded"):
        invoke(container, "status", "nope")
    with pytest.raises(BadInput, match="no job, sweep or pipeline named nope is recorded"):
        invoke(container, "cancel", "nope", "--state", "failed")
    with pytest.raises(BadInput, match="solo is a job of its own, not a sweep: --state chooses elements"):
        invoke(container, "status", "solo", "--state", "failed")
    with pytest.raises(BadInput, match="no job is ever in that state"):
        invoke(container, "status", "exp", "--state", "faild")


def test_list_shows_a_sweep_as_one_row_and_expand_shows_its_elements(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0
    _sweep(container)

    header, *rows = _lines(invoke(container, "list").stdout)

    assert len(rows) == 2
    assert rows[0].startswith("exp   sweep of 5: 3 succeeded, 1 failed, 1 recorded  local")
    assert rows[0][header.index("SUPERVISOR"):].startswith("1 Unattended")
    assert rows[1].startswith("solo  succeeded")
    expanded = [row.split()[0] for row in _lines(invoke(container, "list", "--expand").stdout)[1:]]
    assert expanded == ["exp-4", "exp-3", "exp-2", "exp-1", "exp-0", "solo"]


def test_list_limit_counts_a_sweep_as_one_row(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "solo", "--", "true").return_value == 0
    _sweep(container)

    result = invoke(container, "list", "--limit", "1")

    assert [row.split()[0] for row in _lines(result.stdout)[1:]] == ["exp"]
    assert "1 older job not shown" in result.stderr


def test_list_json_keeps_every_job_and_names_its_sweep(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    jobs = _json(invoke(container, "list", "--json").stdout)["jobs"]

    assert sorted(j["job"] for j in jobs) == [f"exp-{i}" for i in range(5)]
    assert {(j["sweep"], j["sweep_index"]) for j in jobs} == {("exp", i) for i in range(5)}


def test_a_sweep_in_one_state_is_one_row_with_that_state(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container, supervised=0)

    row = _lines(invoke(container, "list").stdout)[1]

    assert row.startswith("exp   sweep of 5: recorded  local")


def test_cancel_of_a_sweep_asks_every_element_and_says_one_line(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    result = invoke(container, "cancel", "exp")

    assert result.return_value == 2  # some refused: they had ended already
    assert result.stdout.strip() == "sweep exp: cancel: 1 confirmed, 4 refused (already ended)"
    assert "exp-0" not in result.stderr  # ended ones are counted, not listed
    state = _json(invoke(container, "status", "--json", "exp-4").stdout)
    assert state["outcome"]["result"] == "cancelled"
    assert [r["action"] for r in state["requests"]] == ["cancel"]


def test_a_command_on_chosen_elements_asks_only_those(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    recorded = invoke(container, "give-up", "exp", "--state", "recorded")
    assert recorded.return_value == 0 and recorded.stdout.strip() == \
        "sweep exp --state recorded: give-up: 1 confirmed"
    for done in ("exp-0", "exp-3"):
        assert _json(invoke(container, "status", "--json", done).stdout)["requests"] == []
    nothing = invoke(container, "hold", "exp", "--state", "running")
    assert nothing.return_value == 0 and "no element running, nothing was asked" in nothing.stdout


def test_a_command_on_a_sweep_with_json_has_an_object_per_element(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    body = _json(invoke(container, "cancel", "--json", "exp").stdout)

    assert body["sweep"] == "exp" and body["exit_code"] == 2 and body["chosen"] == 5
    assert body["counts"] == {"confirmed": 1, "refused": 4, "not-answered": 0}
    by_job = {e["job"]: e for e in body["elements"]}
    assert by_job["exp-4"]["answer"] == "confirmed" and by_job["exp-4"]["by"] == "this command"
    assert by_job["exp-0"]["error"]["code"] == "refused"


def test_a_command_on_one_element_is_the_job_command(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)

    result = invoke(container, "cancel", "exp-4")

    assert result.return_value == 0 and result.stdout.startswith("job exp-4: cancel confirmed by this command")
    with pytest.raises(BadInput, match="exp-4 is a job of its own, not a sweep"):
        invoke(container, "cancel", "exp-4", "--state", "failed")


def test_resubmit_failed_runs_the_failed_elements_again_and_leaves_the_others(wired: Wired) -> None:
    container, scheduler, pointers = wired
    _sweep(container)
    made = scheduler.count("create_held")

    result = invoke(container, "resubmit", "exp", "--failed")

    assert result.return_value == 0, result.output
    assert "sweep exp --failed: resubmit: 1 confirmed" in result.stdout
    assert "the new attempts are made by the sweep's supervisor: dunscaith supervise exp" in result.stdout
    assert "3 elements succeeded: not resubmitted (exp-0, exp-1, exp-2)" in result.stderr
    assert "exp-4 recorded: not resubmitted (no outcome yet: it may still run)" in result.stderr
    assert scheduler.count("create_held") == made  # a command makes no attempt
    assert invoke(container, "status", "exp-3").stdout.startswith("exp-3  resubmitted")
    assert pointers.read(JobId("exp-3")).state == "resubmitted"  # not settled: indexed again, found Unattended

    assert invoke(container, "supervise", "exp-3").return_value == 1  # `false` fails again, as attempt 2
    attempts = _json(invoke(container, "status", "--json", "exp-3").stdout)["attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2] and scheduler.count("create_held") == made + 1


def test_resubmit_failed_is_for_a_sweep(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container)
    with pytest.raises(BadInput, match="exp-3 is a job of its own, not a sweep: --failed chooses elements"):
        invoke(container, "resubmit", "exp-3", "--failed")
    with pytest.raises(BadInput, match="does not go with --state"):
        invoke(container, "resubmit", "exp", "--failed", "--state", "failed")
    refused = invoke(container, "resubmit", "exp-0")  # one element, as a job: its outcome stands
    assert refused.return_value == 2 and "exp-0 succeeded: not resubmitted" in refused.stderr


def test_the_unattended_notice_names_a_sweep_once(wired: Wired) -> None:
    container, _, _ = wired
    _sweep(container, supervised=0)

    notices = [line for line in invoke(container, "list").stderr.splitlines() if "Unattended" in line]

    assert notices == ["dunscaith: sweep exp: 5 elements are Unattended (no supervisor); reattach with: "
                       "dunscaith supervise exp"]


# --- the use case: elements a live supervisor holds are asked through their records, all at once ------------

class Answering(StopAfter):
    """A command's wait during which a live supervisor's loop comes round (``turn``), then the clock moves."""

    def __init__(self, clock: FakeClock, turn: Callable[[], None]) -> None:
        super().__init__(clock)
        self._turn = turn

    def wait(self, seconds: float) -> str | None:
        self._turn()
        return super().wait(seconds)


def _elements(r: Rig, n: int) -> list[JobId]:
    """``n`` elements of sweep s, each released and pending (nothing runs by itself here)."""
    jobs = []
    for index in range(n):
        spec = JobSpec(JobId(f"s-{index}"), "local", "fake", ("true",), member=SweepMember(JobId("s"), index))
        job = RecordJob(r.store, r.clock, NoCrash())(spec)
        r.run(job, StopAfter(r.clock, waits=2))
        jobs.append(job)
    return jobs


def _use_case(r: Rig, wait: float = 5.0) -> SweepCommands:
    return SweepCommands(r.store, r.clock, lambda job: JobCommands(r.store, r.clock, NoCrash(), lambda: r.supervisor,
                                                                   wait=wait), wait=wait)


def test_elements_a_live_supervisor_holds_are_all_asked_first_then_answered_by_it() -> None:
    r = rig(exit_code=None)
    jobs = _elements(r, 3)
    sweeps = _use_case(r)
    with r.store.lock(jobs[0]) as first, r.store.lock(jobs[1]) as second:
        asked: list[int] = []

        def supervisor_loop() -> None:  # by its first turn, both requests are in their records
            asked.append(sum(1 for job in jobs[:2] if r.kinds(job)[-1] == "request"))
            for job, lock in ((jobs[0], first), (jobs[1], second)):
                r.supervisor.carry_out(job, lock, StopAfter(r.clock))

        answer = sweeps(sweeps.choose("s"), Action.HOLD, Answering(r.clock, supervisor_loop))

    assert asked[0] == 2
    assert [(x.job, x.answer, x.by) for x in answer.results] == [
        (jobs[0], Answer.CONFIRMED, Answerer.SUPERVISOR), (jobs[1], Answer.CONFIRMED, Answerer.SUPERVISOR),
        (jobs[2], Answer.CONFIRMED, Answerer.THIS_COMMAND)]
    assert all(r.kinds(job)[-3:] == ["request", "answer", "held"] for job in jobs)


def test_a_request_no_one_answers_in_time_stays_in_the_record_and_says_so() -> None:
    r = rig(exit_code=None)
    jobs = _elements(r, 1)
    sweeps = _use_case(r, wait=1.0)
    with r.store.lock(jobs[0]):
        answer = sweeps(sweeps.choose("s-0"), Action.CANCEL, StopAfter(r.clock))

    assert answer.results[0].answer is Answer.NOT_ANSWERED and "stays in the record" in answer.results[0].detail
    assert r.kinds(jobs[0])[-1] == "request"


def test_an_element_whose_supervisor_went_away_is_answered_by_the_command() -> None:
    r = rig(exit_code=None)
    jobs = _elements(r, 2)
    sweeps = _use_case(r)
    held = r.store.lock(jobs[0])
    held.__enter__()

    def gone() -> None:
        held.__exit__(None, None, None)

    answer = sweeps(sweeps.choose("s", "pending"), Action.CANCEL, Answering(r.clock, gone))

    assert [(x.answer, x.by) for x in answer.results] == [(Answer.CONFIRMED, Answerer.THIS_COMMAND)] * 2
    assert r.kinds(jobs[0]).count("request") == 1  # its posted request, answered here: never asked twice


class Counting(InMemoryStore):
    """The memory store, counting what the command asks of it (not while the supervisor's turn runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.counting = False
        self.reads: Counter[str] = Counter()
        self.health_calls = 0
        self.healths_calls: list[int] = []
        self.last_seqs_calls: list[int] = []

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        if self.counting:
            self.last_seqs_calls.append(len(jobs))
        return super().last_seqs(jobs)

    def read(self, job: JobId) -> JobRecord:
        self.reads[job] += self.counting
        return super().read(job)

    def health(self, job: JobId) -> LoopHealth:
        self.health_calls += self.counting
        return super().health(job)

    def healths(self, jobs: Sequence[JobId]) -> dict[JobId, LoopHealth]:
        counting, self.counting = self.counting, False  # the memory store asks ``health`` of each
        if counting:
            self.healths_calls.append(len(jobs))
        try:
            return super().healths(jobs)
        finally:
            self.counting = counting


class EveryRound(InMemoryStore):
    """A store that cannot tell whether a record grew: every unanswered record is read each round."""

    def last_seqs(self, jobs: Sequence[JobId]) -> dict[JobId, int]:
        return {}


def _answered_one_a_turn(store: InMemoryStore | None, action: Action) -> list[tuple[object, ...]]:
    """Four elements a live supervisor holds, which answers one of them a turn (s-0 first): each one's
    result, as the user's words would show it."""
    r = rig(exit_code=None, store=store)
    jobs = _elements(r, 4)
    sweeps = _use_case(r, wait=30.0)
    counted = store if isinstance(store, Counting) else None
    with contextlib.ExitStack() as stack:
        locks = [stack.enter_context(r.store.lock(job)) for job in jobs]
        turns = iter(zip(jobs, locks, strict=True))

        def supervisor_turn() -> None:
            if counted is not None:
                counted.counting = False
            for job, lock in turns:
                r.supervisor.carry_out(job, lock, StopAfter(r.clock))
                break
            if counted is not None:
                counted.counting = True

        chosen = sweeps.choose("s")
        if counted is not None:
            counted.counting = True
        results = sweeps(chosen, action, Answering(r.clock, supervisor_turn)).results
        if counted is not None:
            counted.counting = False
    return [(x.job, x.action, x.answer, x.by, x.detail, x.problem, x.stopped,
             label(x.state) if x.state is not None else None) for x in results]


@pytest.mark.parametrize("action", [Action.HOLD, Action.CANCEL, Action.GIVE_UP])
def test_each_round_reads_only_the_records_that_grew_and_asks_every_lock_at_once(action: Action) -> None:
    store = Counting()

    shown = _answered_one_a_turn(store, action)

    # s-i is answered on the supervisor's turn i+1: four rounds of waiting; yet each record is read
    # twice, once after its post and once after its answer, never once a round while it waits
    assert [x[2:4] for x in shown] == [(Answer.CONFIRMED, Answerer.SUPERVISOR)] * 4
    assert dict(store.reads) == {f"s-{i}": 2 for i in range(4)}
    assert store.health_calls == 0  # no lock asked element by element
    assert store.healths_calls == [4, 4, 3, 2, 1]  # every lock at once: before posting, then each round
    assert store.last_seqs_calls == [4, 3, 2, 1]  # from the second round: the records read before, at once


@pytest.mark.parametrize("action", [Action.HOLD, Action.RELEASE, Action.CANCEL, Action.GIVE_UP])
def test_reading_only_the_records_that_grew_changes_no_answer(action: Action) -> None:
    grown_only = _answered_one_a_turn(None, action)
    every_round = _answered_one_a_turn(EveryRound(), action)

    assert grown_only == every_round


def _unheld(action: Action, one_by_one: bool) -> list[tuple[object, ...]]:
    """Three elements with no supervisor (released and pending), asked by the sweep command, or each by
    the job command as the sweep command asked them before (``wait_stop=False``)."""
    r = rig(exit_code=None)
    jobs = _elements(r, 3)
    if one_by_one:
        commands = JobCommands(r.store, r.clock, NoCrash(), lambda: r.supervisor, wait=5.0)
        results = [commands(job, action, StopAfter(r.clock), wait_stop=False) for job in jobs]
    else:
        sweeps = _use_case(r)
        results = list(sweeps(sweeps.choose("s"), action, StopAfter(r.clock)).results)
    return [(x.job, x.action, x.answer, x.by, x.detail, x.problem, x.stopped,
             label(x.state) if x.state is not None else None, r.kinds(x.job)) for x in results]


@pytest.mark.parametrize("action", [Action.HOLD, Action.RELEASE, Action.CANCEL, Action.GIVE_UP, Action.ABANDON])
def test_elements_with_no_supervisor_are_answered_as_the_job_command_answers_each(action: Action) -> None:
    swept = _unheld(action, one_by_one=False)

    assert swept == _unheld(action, one_by_one=True)  # each answer, its record's events, and stopped
    assert all(x[3] is Answerer.THIS_COMMAND for x in swept)
    assert all(isinstance(kinds, list) and kinds.count("request") == 1 for kinds in (x[8] for x in swept))


class TakenMeanwhile(InMemoryStore):
    """Its first ``healths`` answers as it was a moment before a supervisor took the locks."""

    def __init__(self) -> None:
        super().__init__()
        self.stale = False

    def healths(self, jobs: Sequence[JobId]) -> dict[JobId, LoopHealth]:
        found = super().healths(jobs)
        if self.stale:
            self.stale = False
            return {job: LoopHealth(held=False, last_loop=None) for job in found}
        return found


def test_an_element_a_supervisor_takes_before_the_command_reaches_it_is_asked_with_the_others() -> None:
    store = TakenMeanwhile()
    r = rig(exit_code=None, store=store)
    jobs = _elements(r, 3)
    sweeps = _use_case(r)
    with r.store.lock(jobs[1]) as taken:  # the sweep's supervisor took s-1 (its next element) meanwhile
        turns: list[int] = []

        def supervisor_turn() -> None:  # by its first turn, s-2 was answered here: s-1 was not waited on alone
            turns.append(len(turns))
            if len(turns) == 1:
                assert "answer" in r.kinds(jobs[2])
                r.supervisor.carry_out(jobs[1], taken, StopAfter(r.clock))

        store.stale = True
        answer = sweeps(sweeps.choose("s"), Action.HOLD, Answering(r.clock, supervisor_turn))

    assert [(x.job, x.answer, x.by) for x in answer.results] == [
        (jobs[0], Answer.CONFIRMED, Answerer.THIS_COMMAND), (jobs[1], Answer.CONFIRMED, Answerer.SUPERVISOR),
        (jobs[2], Answer.CONFIRMED, Answerer.THIS_COMMAND)]
    assert [r.kinds(job).count("request") for job in jobs] == [1, 1, 1]  # each asked once, answered once


class Forwarded(Exception):
    pass


def test_a_sweep_whose_elements_are_another_hosts_is_forwarded_there(wired: Wired,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    container, _, pointers = wired
    there = HostIdentity(machine_id="b" * 32, hostname="login2")
    pointers.write(Pointer(JobId("far-3"), "login2", "/var/tmp/x", there, "/opt/bin/dunscaith", "local", "local",
                           "running", datetime.now(UTC), None))
    sent: list[tuple[str, str]] = []

    def forward(section: HopSettings, host: str, binary: str, argv: Sequence[str], job: str) -> NoReturn:
        sent.append((host, job))
        raise Forwarded()

    monkeypatch.setattr(edge, "forward_and_exit", forward)
    for command in (["status", "far"], ["cancel", "far", "--state", "running"], ["resubmit", "far", "--failed"]):
        with pytest.raises(Forwarded):
            invoke(container, *command)
    assert sent == [("login2", "far")] * 3
    with pytest.raises(BadInput, match="no job named near is recorded"):
        invoke(container, "status", "near")  # nothing here, no element's pointer: refused as before


def _far(pointers: Any, job: str, state: str, sweep: str | None, host: str = "login2") -> None:
    """A pointer of a job recorded on another host, never seen supervised (Unattended by its pointer)."""
    there = HostIdentity(machine_id=("b" if host == "login2" else "c") * 32, hostname=host)
    pointers.write(Pointer(JobId(job), host, "/var/tmp/x", there, "/opt/bin/dunscaith", "local", "local", state,
                           datetime.now(UTC), None, JobId(sweep) if sweep else None))


def test_the_unattended_notice_names_another_hosts_sweep_once_with_its_host(wired: Wired) -> None:
    container, _, pointers = wired
    for index in range(3):
        _far(pointers, f"far-{index}", "running" if index else "held", "far")
    _far(pointers, "far-9", "succeeded", "far")  # settled: no judgement calls it Unattended
    _far(pointers, "lone", "running", None)  # a job of its own: its line, as before sweeps
    _far(pointers, "odd-1", "running", "odd")  # one element: one line too, in the singular
    _far(pointers, "far-5", "running", "far", host="login3")  # the same name on a third host: its own line

    notices = [line for line in invoke(container, "list").stderr.splitlines() if "Unattended" in line]

    assert sorted(notices) == sorted([
        "dunscaith: sweep far on host login2: 3 elements look Unattended (their pointers: no supervisor seen "
        "recently); reattach with: dunscaith supervise far (it runs on login2)",
        "dunscaith: job lone on host login2 looks Unattended (its pointer: running, no supervisor seen "
        "recently); reattach with: dunscaith supervise lone (it runs on login2)",
        "dunscaith: sweep odd on host login2: 1 element looks Unattended (their pointers: no supervisor seen "
        "recently); reattach with: dunscaith supervise odd (it runs on login2)",
        "dunscaith: sweep far on host login3: 1 element looks Unattended (their pointers: no supervisor seen "
        "recently); reattach with: dunscaith supervise far (it runs on login3)",
    ])


class _Root:
    """What edge asks of a command's context: its root, holding the container."""

    def __init__(self, container: Container) -> None:
        self.obj = container

    def find_root(self) -> _Root:
        return self


def test_the_notice_leaves_out_the_sweep_or_element_the_command_names(wired: Wired,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    container, _, pointers = wired
    for index in range(3):
        _far(pointers, f"far-{index}", "running", "far")
    _far(pointers, "near-1", "running", "near")

    def notices(skip: str) -> list[str]:
        edge.notice_unattended(edge.at_root(_Root(container), container.use_cases), skip=skip)
        return capsys.readouterr().err.splitlines()

    assert [line.split(":")[1].strip() for line in notices("far")] == ["sweep near on host login2"]
    assert [line.split(":")[1].strip() for line in notices("near-1")] == ["sweep far on host login2"]
    far, near = notices("far-1")  # one element named: the others of its sweep still counted
    assert far.startswith("dunscaith: sweep far on host login2: 2 elements look Unattended") and "near" in near


def _no_store_here(container: Container) -> list[str]:
    """This host has no store (a login node where nothing was recorded); any opening of one is noted."""
    opened: list[str] = []

    def opening() -> None:
        opened.append("store")
        raise AssertionError("the store was opened")

    container.adapters.store_exists.override(providers.Object(False))
    container.adapters.store.override(providers.Callable(opening))
    return opened


def test_a_sweep_of_another_host_named_where_no_store_is_is_forwarded_before_a_store_is_made(
        wired: Wired, monkeypatch: pytest.MonkeyPatch) -> None:
    container, _, pointers = wired
    for index in range(3):
        _far(pointers, f"far-{index}", "running", "far")
    opened = _no_store_here(container)
    sent: list[tuple[str, str]] = []

    def forward(section: HopSettings, host: str, binary: str, argv: Sequence[str], job: str) -> NoReturn:
        sent.append((host, job))
        raise Forwarded()

    monkeypatch.setattr(edge, "forward_and_exit", forward)
    commands = [["status", "far"], ["status", "far", "--state", "running"], ["cancel", "far"], ["hold", "far"],
                ["release", "far"], ["give-up", "far"], ["resubmit", "far", "--failed"], ["supervise", "far"]]
    for command in commands:
        with pytest.raises(Forwarded):
            invoke(container, *command)
    assert sent == [("login2", "far")] * len(commands) and opened == []


def test_list_where_no_store_is_shows_the_pointers_and_makes_none(wired: Wired) -> None:
    container, _, pointers = wired
    for index in range(3):
        _far(pointers, f"far-{index}", "running" if index else "succeeded", "far")
    opened = _no_store_here(container)

    shown = invoke(container, "list")
    every = invoke(container, "list", "--all")  # every pointer, the settled ones too
    as_json = _json(invoke(container, "list", "--json").stdout)

    assert shown.return_value == every.return_value == 0 and opened == []
    header, listed = shown.stdout.split("\n", 1)  # no job of this host: the table's header alone (as squeue's)
    assert header.split()[:2] == ["NAME", "STATE"]
    assert listed.startswith("far  sweep of 2: 2 running  on host login2 (from its elements' pointers; "
                             "2 look Unattended; --expand for each)")
    assert every.stdout.split("\n", 1)[1].startswith("far  sweep of 3: 1 succeeded, 2 running  on host login2")
    assert "sweep far on host login2: 2 elements look Unattended" in shown.stderr  # succeeded: not Unattended
    assert as_json["jobs"] == [] and [p["job"] for p in as_json["pointers"]] == ["far-1", "far-2"]
    with pytest.raises(BadInput, match="no such cluster is configured and no job of it is recorded"):
        invoke(container, "list", "--cluster", "gone")
    assert opened == []


def test_list_where_no_store_is_but_this_hosts_pointers_name_jobs_opens_it(wired: Wired) -> None:
    container, _, pointers = wired
    here = container.adapters.host().identity()
    pointers.write(Pointer(JobId("mine"), "login1", "/var/tmp/x", here, "/opt/bin/dunscaith", "local", "local",
                           "running", datetime.now(UTC), None))
    opened = _no_store_here(container)

    with pytest.raises(AssertionError, match="the store was opened"):  # the real store says it is lost
        invoke(container, "list")
    assert opened == ["store"]
