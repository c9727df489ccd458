"""Live calls through the send service with the real VLQ and Piast-Q adapters against their fakes.

Every row of seed 002's tables that names VLQ or Piast-Q, played end to end: the resume table for a
VLQ job still Configuring, the init job, Piast-Q's New-only and result_expired decisions (the clock
is a fake, moved by hand), "too many connections" in the wait. The fakes' journals show each job
made once and nothing cancelled.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dunscaith.adapters.sites.piastq import PiastqSite
from dunscaith.adapters.sites.vlq import VlqSite
from dunscaith.domain.model.qdevices.exits import StopReason
from dunscaith.domain.model.qdevices.manifest import Manifest, parse_manifest
from dunscaith.domain.model.qdevices.orders import OrderOutcome, OrderState
from dunscaith.domain.model.qdevices.resolve import Option
from dunscaith.domain.model.qdevices.sites import SiteName
from dunscaith.domain.services.qdevices.errors import CallRefused
from dunscaith.domain.services.qdevices.resolve import ResolveOrder
from dunscaith.domain.services.qdevices.send import SendOutcome, SendRequest
from dunscaith.ports.site import Site
from tests.fakes.piastq_server import DEVICE, FakePiastq, bell_program
from tests.fakes.vlq_server import CONFIGURING, PROJECT, FakeVlq
from tests.unit.qdevices.service_kit import QASM, Bench


def manifest(site: str, orders: int = 1, wait: int = 60) -> Manifest:
    head = {"project": PROJECT, "device": "VLQ"} if site == "vlq" else {"device": DEVICE}
    return parse_manifest({"site": site, "name": "run", **head,
                           "limits": {"job_seconds_limit": 60, "budget_seconds": 10_000, "wait_seconds": wait},
                           "orders": [{"name": f"o{i}", "circuit": "c.qasm", "shots": 10}
                                      for i in range(1, orders + 1)]}, "run")


def live(bench: Bench, site: Site, m: Manifest, resume: str | None = None,
         max_order: int | None = None) -> SendOutcome:
    # SendRequest carries programs: OpenQASM, or for Piast-Q the AQT circuit made from it
    program = {o.index: bell_program(o.shots) if m.site is SiteName.PIASTQ else QASM for o in m.orders}
    req = SendRequest(m, "/m.toml", program, resume, max_order, (), bench.host, 42)
    try:
        return bench.service(site).live(req)
    finally:
        site.close()


def vlq_site(fake: FakeVlq, secrets: list[str] | None = None) -> VlqSite:
    sink = secrets if secrets is not None else []
    return VlqSite(fake.token, PROJECT, userorg_url=fake.userorg_url + "/", heappe_url=fake.heappe_url, timeout=2,
                   on_secret=sink.append, init_poll_seconds=0.001)


def piastq_site(fake: FakePiastq) -> PiastqSite:
    return PiastqSite(fake.token, base_url=fake.base_url, timeout=2)


def resolve(bench: Bench, path: str, option: Option, job: str | None = None) -> None:
    ResolveOrder(bench.records, bench.lock, bench.clock, {})(path, "1", option, job)


def metered(fake: FakeVlq, kind: str) -> int:
    if kind == "create":
        names = [json.loads(e.body)["JobSpecification"]["Name"] for e in fake.requests("create")]
        return sum(1 for name in names if name != "backend_init_job")
    init = {j.id for j in fake.jobs.values() if j.is_init}
    return sum(1 for e in fake.requests("submit") if json.loads(e.body)["CreatedJobInfoId"] not in init)


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    return Bench(tmp_path, SiteName.VLQ)


# --- VLQ ------------------------------------------------------------------------------------------
def test_vlq_a_run_makes_the_init_job_then_each_order_once_in_three_steps(bench: Bench, fake_vlq: FakeVlq) -> None:
    secrets: list[str] = []
    out = live(bench, vlq_site(fake_vlq, secrets), manifest("vlq", orders=2))
    assert out.exit == 0, out.detail
    view = bench.view(out.record)
    assert [o.outcome for o in view.orders] == [OrderOutcome.COMPLETED] * 2
    assert (metered(fake_vlq, "create"), metered(fake_vlq, "submit")) == (2, 2)
    assert sum(1 for j in fake_vlq.jobs.values() if j.is_init) == 1  # one init job per call
    assert len(secrets) == 6  # three jobs, each password raw and in base64
    assert fake_vlq.requests("cancel", "delete") == []


def test_vlq_init_job_failed_first_read_is_a_stop_prepare_exit_1_order_unsent(bench: Bench,
                                                                             fake_vlq: FakeVlq) -> None:
    fake_vlq.script("info", "server_error")
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    assert (out.exit, out.stop) == (1, StopReason.PREPARE)
    assert bench.view(out.record).order(1).state is OrderState.UNSENT
    assert out.under_way is not None and out.under_way.job is not None and out.under_way.kind == "init job"
    assert metered(fake_vlq, "create") == 0
    again = live(bench, vlq_site(fake_vlq), manifest("vlq"), resume=out.record, max_order=1)
    assert again.exit == 0  # a resume with --max-order makes a new init job
    assert sum(1 for j in fake_vlq.jobs.values() if j.is_init) == 2 and metered(fake_vlq, "create") == 1


def test_vlq_resume_table_past_configuring_is_collected(bench: Bench, fake_vlq: FakeVlq) -> None:
    fake_vlq.script_metered("submit", "drop_after_create")  # SubmitJob took effect, its answer was lost
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    assert (out.exit, out.stop) == (2, StopReason.UNKNOWN)
    assert bench.view(out.record).order(1).state is OrderState.OPEN
    again = live(bench, vlq_site(fake_vlq), manifest("vlq"), resume=out.record)
    assert again.exit == 0 and bench.view(out.record).order(1).outcome is OrderOutcome.COMPLETED
    assert metered(fake_vlq, "submit") == 1


def test_vlq_resume_table_state_cannot_be_read_stays_open_exit_1(bench: Bench, fake_vlq: FakeVlq) -> None:
    fake_vlq.script_metered("submit", "drop_after_create")
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    fake_vlq.script("info", "server_error")
    again = live(bench, vlq_site(fake_vlq), manifest("vlq"), resume=out.record)
    assert (again.exit, again.stop) == (1, StopReason.STATUS_ERROR)
    assert bench.view(out.record).order(1).state is OrderState.OPEN and metered(fake_vlq, "submit") == 1


def test_vlq_resume_table_configuring_created_no_uploaded_is_final_not_submitted(bench: Bench,
                                                                                 fake_vlq: FakeVlq) -> None:
    fake_vlq.script_metered("upload", "upload_failed")
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    assert (out.exit, out.stop) == (2, StopReason.UNKNOWN)
    again = live(bench, vlq_site(fake_vlq), manifest("vlq"), resume=out.record)
    order = bench.view(out.record).order(1)
    assert again.exit == 0 and order.outcome is OrderOutcome.NOT_SUBMITTED and order.seconds is None
    assert metered(fake_vlq, "submit") == 0


def test_vlq_resume_table_configuring_uploaded_is_submit_unknown_nothing_cancelled_or_resent(
        bench: Bench, fake_vlq: FakeVlq) -> None:
    fake_vlq.script_metered("submit", "drop")  # the connection dropped before SubmitJob did anything
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    again = live(bench, vlq_site(fake_vlq), manifest("vlq"), resume=out.record)
    assert (again.exit, again.stop) == (1, StopReason.SUBMIT_UNKNOWN)
    order = bench.view(out.record).order(1)
    assert order.state is OrderState.OPEN and fake_vlq.jobs[int(order.job or 0)].state == CONFIGURING
    assert metered(fake_vlq, "submit") == 1 and fake_vlq.requests("cancel", "delete") == []
    resolve(bench, out.record or "", Option.NONE)  # the site shows the job never ran
    assert bench.view(out.record).order(1).state is OrderState.FINAL


def test_vlq_resume_table_configuring_with_no_created_line_is_submit_unknown(bench: Bench,
                                                                            fake_vlq: FakeVlq) -> None:
    fake_vlq.script_metered("create", "drop_after_create")  # the job was made, its id never came
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    assert (out.exit, bench.view(out.record).order(1).state) == (2, OrderState.LOST)
    (job,) = [j for j in fake_vlq.jobs.values() if not j.is_init]  # ListJobsForCurrentUser shows it by its Name
    assert job.name == "o1"
    resolve(bench, out.record or "", Option.JOB, str(job.id))
    again = live(bench, vlq_site(fake_vlq), manifest("vlq"), resume=out.record)
    assert (again.exit, again.stop) == (1, StopReason.SUBMIT_UNKNOWN)
    assert metered(fake_vlq, "create") == 1 and metered(fake_vlq, "submit") == 0


@pytest.mark.parametrize("status", [401, 403, 404, 413, 429])
def test_vlq_a_refused_create_job_is_final_refused(bench: Bench, fake_vlq: FakeVlq, status: int) -> None:
    fake_vlq.script_metered("create", "answer", status=status, body={"title": "t", "status": status, "detail": "d"})
    out = live(bench, vlq_site(fake_vlq), manifest("vlq"))
    assert (out.exit, out.stop) == (1, StopReason.REFUSAL)
    assert bench.view(out.record).order(1).outcome is OrderOutcome.REFUSED


def test_vlq_failed_job_is_final_failed_not_a_refusal(bench: Bench, site_token: str) -> None:
    with FakeVlq(token=site_token, path=(2, 8, 32)) as fake:
        out = live(bench, vlq_site(fake), manifest("vlq"))
    assert out.exit == 0 and bench.view(out.record).order(1).outcome is OrderOutcome.FAILED


# --- Piast-Q --------------------------------------------------------------------------------------
def test_piastq_a_run_sends_each_order_once(tmp_path: Path, fake_piastq: FakePiastq) -> None:
    bench = Bench(tmp_path, SiteName.PIASTQ)
    out = live(bench, piastq_site(fake_piastq), manifest("piastq", orders=2))
    assert out.exit == 0 and fake_piastq.job_making_requests() == 2
    assert bench.view(out.record).order(2).outcome is OrderOutcome.COMPLETED


def test_piastq_too_many_connections_in_the_wait_is_a_missed_poll(tmp_path: Path, fake_piastq: FakePiastq) -> None:
    bench = Bench(tmp_path, SiteName.PIASTQ)
    fake_piastq.script("status", "too_many_connections", times=3)
    out = live(bench, piastq_site(fake_piastq), manifest("piastq"))
    assert out.exit == 0
    lines = bench.records.read(out.record or "").lines
    assert sum(1 for x in lines if x.data.get("missed")) == 3


def test_piastq_a_lost_order_says_ask_pcss(tmp_path: Path, fake_piastq: FakePiastq) -> None:
    bench = Bench(tmp_path, SiteName.PIASTQ)
    fake_piastq.script("submit", "drop_after_create")
    out = live(bench, piastq_site(fake_piastq), manifest("piastq"))
    assert out.exit == 2 and "Piast-Q has no job list: ask PCSS" in out.detail


def test_piastq_new_only_is_resolved_none_when_the_first_is_3_days_old_and_the_last_within_24_hours(
        tmp_path: Path, site_token: str) -> None:
    bench = Bench(tmp_path, SiteName.PIASTQ)
    with FakePiastq(token=site_token, path=("New",)) as fake:
        out = live(bench, piastq_site(fake), manifest("piastq", wait=30))
        assert (out.exit, out.stop) == (1, StopReason.WAIT)
        path = out.record or ""
        with pytest.raises(CallRefused):
            resolve(bench, path, Option.NONE)  # New for only seconds
        bench.clock.advance(days=3)
        with pytest.raises(CallRefused):  # the last New line is 3 days old: resume once more first
            resolve(bench, path, Option.NONE)
        again = live(bench, piastq_site(fake), manifest("piastq", wait=30), resume=path)
        assert again.exit == 1
        resolve(bench, path, Option.NONE)
        order = bench.view(path).order(1)
        assert order.state is OrderState.FINAL and order.counts_at_limit
        assert fake.job_making_requests() == 1


def test_piastq_result_expired_is_resolved_expired_after_two_answers_10_minutes_apart(tmp_path: Path,
                                                                                     site_token: str) -> None:
    bench = Bench(tmp_path, SiteName.PIASTQ)
    with FakePiastq(token=site_token, expire_results=True) as fake:
        out = live(bench, piastq_site(fake), manifest("piastq"))
        assert (out.exit, out.stop) == (1, StopReason.RESULT_EXPIRED)
        path = out.record or ""
        with pytest.raises(CallRefused, match="two calls"):
            resolve(bench, path, Option.EXPIRED)
        bench.clock.advance(minutes=9)
        live(bench, piastq_site(fake), manifest("piastq"), resume=path)
        with pytest.raises(CallRefused, match="two calls"):
            resolve(bench, path, Option.EXPIRED)
        bench.clock.advance(minutes=2)
        again = live(bench, piastq_site(fake), manifest("piastq"), resume=path)
        assert again.stop is StopReason.RESULT_EXPIRED
        resolve(bench, path, Option.EXPIRED)
        order = bench.view(path).order(1)
        assert order.state is OrderState.FINAL and order.counts_at_limit
        assert fake.job_making_requests() == 1


def test_vlq_a_signal_in_the_init_jobs_wait_ends_the_call_with_a_signal_stop(bench: Bench, site_token: str) -> None:
    def pause(seconds: float) -> bool:
        bench.interrupts.got = "SIGINT"  # Ctrl-C while the init job is queued
        return True

    with FakeVlq(token=site_token, init_path=(4, 4, 16)) as fake:
        site = VlqSite(fake.token, PROJECT, userorg_url=fake.userorg_url + "/", heappe_url=fake.heappe_url,
                       timeout=2, pause=pause)
        out = live(bench, site, manifest("vlq"))
        assert (out.exit, out.stop) == (130, StopReason.SIGNAL)
        assert bench.view(out.record).order(1).state is OrderState.UNSENT
        assert out.under_way is not None and out.under_way.job is not None  # the init job, to write down
        assert fake.requests("cancel", "delete") == [] and metered(fake, "create") == 0
