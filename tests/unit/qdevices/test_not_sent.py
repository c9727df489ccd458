"""Issue 22 item 14: a job request proven never written is "not sent", never "a job may exist".

The order stays unsent with its cause, charges nothing to the budget bound, blocks nothing, and a
resume with --max-order sends it. A request that may have been written stays lost, as before."""

from __future__ import annotations

from pathlib import Path

from dunscaith.domain.model.qdevices.answers import JobAnswer, JobRequestAnswer, NoAnswer, job_answer_without_reply
from dunscaith.domain.model.qdevices.budget import bound
from dunscaith.domain.model.qdevices.exits import StopReason
from dunscaith.domain.model.qdevices.orders import OrderOutcome, OrderState
from dunscaith.domain.model.qdevices.sites import SiteName
from dunscaith.domain.services.qdevices.send import SendRequest
from tests.unit.qdevices.service_kit import Bench, manifest

NOT_SENT = JobRequestAnswer(JobAnswer.NOT_SENT, None, None,
                            "not sent: nothing left the machine (ConnectError: [Errno 111] Connection refused)")
LOST = JobRequestAnswer(JobAnswer.UNKNOWN, None, None, "no answer (ReadError)")


def test_the_rule_only_a_request_proven_unwritten_is_not_sent() -> None:
    assert job_answer_without_reply(NoAnswer(False, "refused")) is JobAnswer.NOT_SENT
    assert job_answer_without_reply(NoAnswer(True, "reset")) is JobAnswer.UNKNOWN


def test_a_create_never_written_leaves_the_order_unsent_with_its_cause(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    out = bench.send(manifest(orders=2))
    assert out.exit == 0
    bench2 = Bench(tmp_path / "b")
    bench2.site.script("create", [NOT_SENT])
    out = bench2.send(manifest(orders=2))
    assert (out.exit, out.stop) == (1, StopReason.NOT_SENT)
    assert "Connection refused" in out.detail and "--max-order 2" in out.detail
    assert out.under_way is None  # no job can be under way: nothing left the machine
    view = bench2.view(out.record)
    assert [o.state for o in view.orders] == [OrderState.UNSENT, OrderState.UNSENT]
    assert bound([view]) == 0  # nothing charged: no job can exist
    lines = bench2.records.read(out.record).lines  # type: ignore[arg-type]
    assert [x.type.value for x in lines] == ["start", "submitting", "not_sent", "stop"]
    assert lines[2].data["detail"].endswith("Connection refused)")
    assert bench2.creates() == 1  # never retried within the call


def test_a_resume_sends_the_unsent_order_and_a_new_run_is_not_blocked(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [NOT_SENT])
    out = bench.send(manifest(orders=2))
    m = manifest(orders=2)
    plan = bench.service().plan(SendRequest(m, "/m.toml", {}, host=bench.host))
    assert plan.blockers == () and plan.bound_now == 0  # the unsent order blocks no new run
    again = bench.send(manifest(orders=2), resume=out.record, max_order=2)
    assert again.exit == 0, again.detail
    assert all(o.outcome is OrderOutcome.COMPLETED for o in bench.view(out.record).orders)
    assert bench.creates() == 3  # the first (never written), then one for each order


def test_an_answer_lost_after_the_request_was_written_is_still_lost(tmp_path: Path) -> None:
    bench = Bench(tmp_path)
    bench.site.script("create", [LOST])
    out = bench.send(manifest(orders=1))
    assert (out.exit, out.stop) == (2, StopReason.UNKNOWN)
    assert bench.view(out.record).orders[0].state is OrderState.LOST


def test_a_vlq_submit_never_written_is_recorded_not_submitted_on_resume(tmp_path: Path) -> None:
    bench = Bench(tmp_path, site=SiteName.VLQ)
    bench.site.script("submit", [NOT_SENT])
    out = bench.send(manifest(site="vlq", orders=1))
    assert (out.exit, out.stop) == (1, StopReason.NOT_SENT)
    order = bench.view(out.record).orders[0]
    assert order.state is OrderState.OPEN and order.created and not order.uploaded  # SubmitJob never left
    again = bench.send(manifest(site="vlq", orders=1), resume=out.record)
    order = bench.view(out.record).orders[0]
    assert again.exit == 0 and order.outcome is OrderOutcome.NOT_SUBMITTED  # no device time, no resolve needed


def test_a_vlq_upload_never_written_is_recorded_not_submitted_on_resume(tmp_path: Path) -> None:
    bench = Bench(tmp_path, site=SiteName.VLQ)
    bench.site.script("upload", [NOT_SENT])
    out = bench.send(manifest(site="vlq", orders=1))
    assert (out.exit, out.stop) == (1, StopReason.NOT_SENT)
    again = bench.send(manifest(site="vlq", orders=1), resume=out.record)
    assert again.exit == 0
    assert bench.view(out.record).orders[0].outcome is OrderOutcome.NOT_SUBMITTED
