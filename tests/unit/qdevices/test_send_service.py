"""The live call on a FakeSite: the order of writes, answers, waits, stops, resumes and blocks."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.domain.model.qdevices.answers import JobAnswer, JobRequestAnswer, Phase, ReadKind, ResultRead, StateRead
from dunscaith.domain.model.qdevices.budget import bound
from dunscaith.domain.model.qdevices.exits import StopReason
from dunscaith.domain.model.qdevices.lines import Line, LineType
from dunscaith.domain.model.qdevices.orders import OrderOutcome, OrderState
from dunscaith.domain.model.qdevices.sites import SiteName
from dunscaith.domain.services.qdevices.errors import CallRefused
from dunscaith.domain.services.qdevices.send import ProgramStopped, RecordWriteStopped, SendRequest
from dunscaith.ports.run_record import RecordAppender, RecordWriteFailed
from tests.unit.qdevices.service_kit import Bench, FakeInterrupts, manifest

UNKNOWN = JobRequestAnswer(JobAnswer.UNKNOWN, None, 502, "HTTP 502")
REFUSED = JobRequestAnswer(JobAnswer.REFUSED, None, 403, "HTTP 403")
MISSED = StateRead(ReadKind.MISSED, detail="no answer")


def types(bench: Bench, path: str | None) -> list[str]:
    assert path is not None
    return [line.type.value for line in bench.records.read(path).lines]


def test_a_run_sends_each_order_once_and_collects_it(tmp_path: Path) -> None:
    bench = Bench(tmp_path, polls_to_finish=2)
    out = bench.send(manifest())
    assert out.exit == 0 and bench.creates() == 2
    assert types(bench, out.record) == ["start", "submitting", "submitted", "status", "status", "result",
                                        "submitting", "submitted", "status", "status", "result"]
    assert all(o.state is OrderState.FINAL for o in bench.view(out.record).orders)


def test_submitting_is_durable_before_the_request(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    seen: list[list[str]] = []
    create = bench.site.create

    def spy(request):  # type: ignore[no-untyped-def]
        path = next((tmp_path / "records").rglob("*.jsonl"))
        seen.append(types(bench, str(path)))
        return create(request)

    bench.site.create = spy  # type: ignore[method-assign]
    bench.send(manifest(orders=1))
    assert seen == [["start", "submitting"]]


def test_a_refusal_is_final_and_the_rule_refusal_stops_the_run(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [REFUSED])
    out = bench.send(manifest())
    assert (out.exit, out.stop) == (1, StopReason.REFUSAL)
    assert bench.view(out.record).order(1).outcome is OrderOutcome.REFUSED
    assert bench.view(out.record).order(2).state is OrderState.UNSENT and bench.creates() == 1


def test_on_refusal_can_let_the_run_go_on(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.rules.go_on_after_refusal = True
    bench.site.script("create", [REFUSED])
    out = bench.send(manifest())
    assert out.exit == 0 and bench.view(out.record).order(2).outcome is OrderOutcome.COMPLETED


def test_an_unknown_answer_is_a_stop_unknown_exit_2_and_the_order_is_lost(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [UNKNOWN])
    out = bench.send(manifest())
    assert (out.exit, out.stop) == (2, StopReason.UNKNOWN)
    assert bench.view(out.record).order(1).state is OrderState.LOST
    assert out.under_way is not None and out.under_way.job is None


def test_a_lost_order_blocks_a_new_run_until_resolved(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [UNKNOWN])
    bench.send(manifest())
    with pytest.raises(CallRefused, match="is lost: resolve it"):
        bench.send(manifest())
    assert bench.creates() == 1


def test_a_resume_never_sends_a_lost_order_again(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [UNKNOWN])
    out = bench.send(manifest())
    with pytest.raises(CallRefused, match="is lost"):
        bench.send(manifest(), resume=out.record, max_order=2)
    collect = bench.send(manifest(), resume=out.record)
    assert collect.exit == 2 and bench.creates() == 1


def test_an_open_order_blocks_a_new_run_on_its_site_until_collected(tmp_path: Path) -> None:
    bench = Bench(tmp_path, polls_to_finish=100)
    first = bench.send(manifest(wait=10))
    assert (first.exit, first.stop) == (1, StopReason.WAIT)
    with pytest.raises(CallRefused, match="is open: collect it"):
        bench.send(manifest())
    bench.site.polls_to_finish = 1
    again = bench.send(manifest(), resume=first.record)
    assert again.exit == 0 and bench.creates() == 1  # collected; order 2 needs --max-order
    assert bench.view(first.record).order(2).state is OrderState.UNSENT
    more = bench.send(manifest(), resume=first.record, max_order=2)
    assert more.exit == 0 and bench.creates() == 2


def test_missed_polls_are_asked_again_until_a_good_answer(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("state", [MISSED, MISSED])
    out = bench.send(manifest(orders=1))
    assert out.exit == 0
    statuses = [line.data["missed"] for line in bench.records.read(str(out.record)).lines
                if line.type is LineType.STATUS]
    assert statuses[:2] == ["no answer", "no answer"]


def test_missed_polls_until_wait_seconds_stop_status_error_and_the_order_stays_open(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("state", [MISSED] * 20)
    out = bench.send(manifest(orders=1, wait=20))
    assert (out.exit, out.stop) == (1, StopReason.STATUS_ERROR)
    assert bench.view(out.record).order(1).state is OrderState.OPEN


def test_an_answer_that_ends_the_wait_stops_at_once(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("state", [StateRead(ReadKind.ENDS, detail="HTTP 404")])
    out = bench.send(manifest(orders=1))
    assert (out.exit, out.stop) == (1, StopReason.STATUS_ERROR) and bench.interrupts.waits == 0


def test_no_result_right_after_completed_is_a_missed_poll(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("result", [ResultRead(ReadKind.GOOD, ready=False)])
    out = bench.send(manifest(orders=1))
    assert out.exit == 0 and bench.view(out.record).order(1).outcome is OrderOutcome.COMPLETED


def test_a_malformed_result_stops_result_error_and_the_order_stays_open(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("result", [ResultRead(ReadKind.ENDS, detail="malformed")])
    out = bench.send(manifest(orders=1))
    assert (out.exit, out.stop) == (1, StopReason.RESULT_ERROR)
    assert bench.view(out.record).order(1).state is OrderState.OPEN


def test_a_failed_job_is_final(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("state", [StateRead(ReadKind.GOOD, Phase.FAILED, "FAILED")])
    out = bench.send(manifest(orders=1))
    assert out.exit == 0 and bench.view(out.record).order(1).outcome is OrderOutcome.FAILED


def test_a_signal_in_the_wait_ends_the_call_with_a_stop_line_and_the_job_under_way(tmp_path: Path) -> None:
    bench = Bench(tmp_path, polls_to_finish=5)
    bench.interrupts = FakeInterrupts(bench.clock, "SIGTERM", after=2)
    out = bench.send(manifest())
    assert (out.exit, out.stop) == (128 + 15, StopReason.SIGNAL)
    assert out.under_way is not None and out.under_way.order == 1 and out.under_way.job
    assert types(bench, out.record)[-1] == "stop" and bench.creates() == 1


def test_the_budget_rule_stops_before_an_order_that_would_pass_it(tmp_path: Path) -> None:
    bench = Bench(tmp_path, seconds=1.0)
    out = bench.send(manifest(orders=3, limit=60, budget=62))  # each order: the bound so far + 60 <= 62
    assert out.exit == 0
    bench2 = Bench(tmp_path / "b", seconds=50.0)
    out2 = bench2.send(manifest(orders=3, limit=60, budget=100))  # order 2: 50 + 60 > 100
    assert (out2.exit, out2.stop) == (1, StopReason.BUDGET) and bench2.creates() == 1


def test_a_lost_order_elsewhere_counts_at_the_limit_in_the_budget(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [UNKNOWN])
    first = bench.send(manifest(orders=1, limit=60))
    assert first.exit == 2
    assert bound([bench.view(first.record)]) == 60


def test_a_user_rule_stops_before_the_order(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.rules.stop_before = "not on Sundays"
    out = bench.send(manifest())
    assert (out.exit, out.stop, bench.creates()) == (1, StopReason.RULE, 0)
    assert bench.rules.seen[0]["name"] == "o1"


def test_a_record_write_failure_stops_before_any_further_request(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bench = Bench(tmp_path)
    real = bench.records.create

    def create(site: str, run: str, first: Line) -> RecordAppender:
        appender = real(site, run, first)
        original = appender.append

        def append(line: Line) -> None:
            if line.type is LineType.SUBMITTED:
                raise RecordWriteFailed("disk full")
            original(line)

        monkeypatch.setattr(appender, "append", append)
        return appender

    monkeypatch.setattr(bench.records, "create", create)
    with pytest.raises(RecordWriteStopped) as caught:
        bench.send(manifest())
    assert caught.value.under_way is not None and caught.value.under_way.job
    assert bench.site.journal == [("create", 1)]


def test_a_job_id_that_no_url_can_hold_is_not_read(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [JobRequestAnswer(JobAnswer.OK, "a\nb", 200)])
    out = bench.send(manifest(orders=1))
    assert (out.exit, out.stop) == (1, StopReason.STATUS_ERROR)
    assert [m for m, _ in bench.site.journal] == ["create"]


# --- resumes that send: identity, host, newest -------------------------------------------------------
def test_a_resume_that_sends_is_refused_on_another_host_but_still_collects(tmp_path: Path) -> None:
    bench = Bench(tmp_path, polls_to_finish=100)
    first = bench.send(manifest(wait=10))
    other = Bench(tmp_path, host="h2")
    with pytest.raises(CallRefused, match="started on host h1"):
        other.send(manifest(), resume=first.record, max_order=2)
    other.site.polls_to_finish = 1
    assert other.send(manifest(), resume=first.record).exit == 0


def test_a_copy_of_a_record_sends_nothing(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [REFUSED])
    first = bench.send(manifest())
    assert first.record is not None
    copy = Path(first.record).with_name("20990101T000000.000000Z-1.jsonl")
    copy.write_bytes(Path(first.record).read_bytes())
    with pytest.raises(CallRefused, match="a copy sends nothing"):
        bench.send(manifest(), resume=str(copy), max_order=2)
    assert bench.creates() == 1


def test_a_resume_that_sends_takes_only_the_newest_record_of_its_run_folder(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [REFUSED, REFUSED])
    first = bench.send(manifest())
    bench.clock.advance(seconds=5)
    second = bench.send(manifest())
    assert first.record != second.record
    with pytest.raises(CallRefused, match="not the newest"):
        bench.send(manifest(), resume=first.record, max_order=2)


def test_a_resume_of_another_manifest_is_refused(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [REFUSED])
    first = bench.send(manifest())
    with pytest.raises(CallRefused, match="not a record of this manifest"):
        bench.send(manifest(orders=3), resume=first.record)


# --- VLQ's multi-step orders on a fake site -----------------------------------------------------------
def vlq(tmp: Path) -> Bench:
    return Bench(tmp, SiteName.VLQ)


def test_vlq_writes_created_and_uploaded_before_submit(tmp_path: Path) -> None:
    bench = vlq(tmp_path)
    out = bench.send(manifest("vlq", orders=1))
    assert out.exit == 0
    assert types(bench, out.record)[:5] == ["start", "submitting", "created", "uploaded", "submitted"]
    assert [m for m, _ in bench.site.journal][:4] == ["prepare", "create", "upload", "submit"]


def test_vlq_a_failed_init_job_is_a_stop_prepare_and_the_order_stays_unsent(tmp_path: Path) -> None:
    bench = vlq(tmp_path)
    bench.site.script("prepare", [JobRequestAnswer(JobAnswer.UNKNOWN, "init-7", None, "failed read")])
    out = bench.send(manifest("vlq", orders=1))
    assert (out.exit, out.stop) == (1, StopReason.PREPARE)
    assert bench.view(out.record).order(1).state is OrderState.UNSENT
    assert out.under_way is not None and out.under_way.job == "init-7"


def test_vlq_resume_configuring_created_no_uploaded_is_not_submitted(tmp_path: Path) -> None:
    bench = vlq(tmp_path)
    bench.site.script("upload", [JobRequestAnswer(JobAnswer.UNKNOWN, None, None, "no answer")])
    out = bench.send(manifest("vlq", orders=1))
    assert out.exit == 2 and bench.view(out.record).order(1).state is OrderState.OPEN
    again = bench.send(manifest("vlq", orders=1), resume=out.record)
    assert again.exit == 0
    assert bench.view(out.record).order(1).outcome is OrderOutcome.NOT_SUBMITTED
    assert [m for m, _ in bench.site.journal].count("submit") == 0


def test_vlq_resume_configuring_uploaded_is_submit_unknown_and_nothing_is_sent(tmp_path: Path) -> None:
    bench = vlq(tmp_path)
    bench.site.script("submit", [JobRequestAnswer(JobAnswer.UNKNOWN, None, None, "no answer")])
    out = bench.send(manifest("vlq", orders=1))
    assert (out.exit, out.stop) == (2, StopReason.UNKNOWN)
    bench.site.configuring.add(bench.view(out.record).order(1).job or "")
    again = bench.send(manifest("vlq", orders=1), resume=out.record)
    assert (again.exit, again.stop) == (1, StopReason.SUBMIT_UNKNOWN)
    assert [m for m, _ in bench.site.journal].count("submit") == 1


def test_vlq_resume_past_configuring_collects(tmp_path: Path) -> None:
    bench = vlq(tmp_path)
    bench.site.script("submit", [JobRequestAnswer(JobAnswer.UNKNOWN, None, None, "no answer")])
    out = bench.send(manifest("vlq", orders=1))
    again = bench.send(manifest("vlq", orders=1), resume=out.record)
    assert again.exit == 0 and bench.view(out.record).order(1).outcome is OrderOutcome.COMPLETED


def test_vlq_resume_state_unreadable_stays_open_exit_1(tmp_path: Path) -> None:
    bench = vlq(tmp_path)
    bench.site.script("submit", [JobRequestAnswer(JobAnswer.UNKNOWN, None, None, "no answer")])
    out = bench.send(manifest("vlq", orders=1))
    bench.site.script("state", [MISSED])
    again = bench.send(manifest("vlq", orders=1), resume=out.record)
    assert again.exit == 1 and bench.view(out.record).order(1).state is OrderState.OPEN


# --- across sites, and errors of the program ----------------------------------------------------------
def test_a_lost_order_on_another_site_blocks_a_new_run(tmp_path: Path) -> None:
    vlq_bench = vlq(tmp_path)
    vlq_bench.site.script("create", [UNKNOWN])
    assert vlq_bench.send(manifest("vlq", orders=1)).exit == 2
    bench = Bench(tmp_path)
    m = manifest()
    req = SendRequest(m, "/m.toml", {o.index: "OPENQASM 2.0;" for o in m.orders}, host="h1",
                      other_sites={"vlq": ()})
    with pytest.raises(CallRefused, match="is lost"):
        bench.service().live(req)
    assert bench.creates() == 0


def test_an_open_order_on_another_site_does_not_block(tmp_path: Path) -> None:
    vlq_bench = Bench(tmp_path, SiteName.VLQ, polls_to_finish=100)
    assert vlq_bench.send(manifest("vlq", orders=1, wait=5)).exit == 1
    bench = Bench(tmp_path)
    m = manifest()
    req = SendRequest(m, "/m.toml", {o.index: "OPENQASM 2.0;" for o in m.orders}, host="h1",
                      other_sites={"vlq": ()})
    assert bench.service().live(req).exit == 0


def test_an_error_of_the_program_in_the_wait_writes_a_stop_and_names_the_job_under_way(tmp_path: Path) -> None:
    bench = Bench(tmp_path)

    def broken(job: str) -> StateRead:
        raise RuntimeError("bug")

    bench.site.state = broken  # type: ignore[method-assign]
    with pytest.raises(ProgramStopped) as caught:
        bench.send(manifest())
    under = caught.value.under_way
    assert under is not None and under.order == 1 and under.job
    assert types(bench, caught.value.record)[-1] == "stop"
    assert bench.view(caught.value.record).order(1).state is OrderState.OPEN
