"""MqssSite against the fake MQSS server: each answer classified as the MQSS site page says."""

from __future__ import annotations

from typing import Any

import pytest

from dunscaith.adapters.sites.mqss import MqssSite
from dunscaith.domain.model.qdevices.answers import JobAnswer, Phase, ReadKind
from dunscaith.ports.site import JobRequest
from tests.fakes.mqss_server import FakeMqss

REQUEST = JobRequest(1, "bell", "Q5", "OPENQASM 2.0;\nqreg q[2];\n", 100)


def site_for(fake: FakeMqss, timeout: float = 2.0) -> MqssSite:
    return MqssSite(fake.token, base_url=fake.base_url, timeout=timeout)


def test_a_job_is_made_with_the_clients_six_fields_and_its_uuid_read(fake_mqss: FakeMqss) -> None:
    answer = site_for(fake_mqss).create(REQUEST)
    assert answer.kind is JobAnswer.OK and answer.job in fake_mqss.jobs
    job = fake_mqss.jobs[answer.job]
    assert (job.shots, job.resource_name, job.circuit_format) == (100, "Q5", "qasm")


@pytest.mark.parametrize("status", [401, 403])
def test_a_refusal_401_or_403_is_refused(fake_mqss: FakeMqss, status: int) -> None:
    fake_mqss.script("submit", "refuse", status=status)
    answer = site_for(fake_mqss).create(REQUEST)
    assert (answer.kind, answer.status) == (JobAnswer.REFUSED, status) and not fake_mqss.jobs


def test_a_wrong_token_is_refused(fake_mqss: FakeMqss) -> None:
    answer = MqssSite("not-the-token", base_url=fake_mqss.base_url).create(REQUEST)
    assert answer.kind is JobAnswer.REFUSED


@pytest.mark.parametrize("status", [500, 502, 503])
def test_500_or_more_is_unknown(fake_mqss: FakeMqss, status: int) -> None:
    fake_mqss.script("submit", "server_error", status=status)
    assert site_for(fake_mqss).create(REQUEST).kind is JobAnswer.UNKNOWN


def test_a_4xx_that_is_no_refusal_at_mqss_is_unknown(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("submit", "too_many")
    assert site_for(fake_mqss).create(REQUEST).kind is JobAnswer.UNKNOWN


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_unknown_and_never_followed_the_trap_sees_nothing(fake_mqss: FakeMqss, status: int) -> None:
    fake_mqss.script("submit", "redirect", status=status)
    answer = site_for(fake_mqss).create(REQUEST)
    assert answer.kind is JobAnswer.UNKNOWN and "not followed" in answer.detail
    assert fake_mqss.trap.journal == [] and not fake_mqss.trap.saw_token


@pytest.mark.parametrize("reset", [False, True])
def test_the_job_made_then_the_connection_dropped_is_unknown_sent_once(fake_mqss: FakeMqss, reset: bool) -> None:
    fake_mqss.script("submit", "drop_after_create", reset=reset)
    answer = site_for(fake_mqss).create(REQUEST)
    assert answer.kind is JobAnswer.UNKNOWN and answer.job is None
    assert len(fake_mqss.jobs) == 1 and fake_mqss.job_making_requests() == 1  # no transport retry


def test_a_hang_is_unknown_after_the_timeout_sent_once(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("submit", "hang", seconds=3)
    answer = site_for(fake_mqss, timeout=0.5).create(REQUEST)
    assert answer.kind is JobAnswer.UNKNOWN and fake_mqss.job_making_requests() == 1


def test_half_a_body_is_unknown(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("submit", "half_body")
    assert site_for(fake_mqss).create(REQUEST).kind is JobAnswer.UNKNOWN


def test_a_success_with_no_job_id_is_unknown(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("submit", "no_job_id")
    answer = site_for(fake_mqss).create(REQUEST)
    assert answer.kind is JobAnswer.UNKNOWN and "no job id" in answer.detail


def test_states_are_read_until_completed_then_the_result_with_its_seconds(fake_mqss: FakeMqss) -> None:
    site = site_for(fake_mqss)
    job = site.create(REQUEST).job
    assert job is not None
    words = [site.state(job).site_state for _ in range(3)]
    assert words == ["PENDING", "WAITING", "COMPLETED"]
    result = site.result(job)
    assert result.ready and result.seconds == pytest.approx(2.5) and result.counts


def test_a_failed_status_read_is_a_missed_poll(fake_mqss: FakeMqss) -> None:
    site = site_for(fake_mqss, timeout=0.5)
    job = site.create(REQUEST).job
    assert job is not None
    fake_mqss.script("status", "server_error", status=503)
    fake_mqss.script("status", "drop")
    fake_mqss.script("status", "hang", seconds=2)
    assert [site.state(job).kind for _ in range(4)] == [ReadKind.MISSED] * 3 + [ReadKind.GOOD]


def test_a_redirect_on_a_read_ends_the_wait_and_the_trap_sees_no_token(fake_mqss: FakeMqss) -> None:
    site = site_for(fake_mqss)
    job = site.create(REQUEST).job
    assert job is not None
    fake_mqss.script("status", "redirect", status=307)
    assert site.state(job).kind is ReadKind.ENDS and not fake_mqss.trap.saw_token


def test_no_result_right_after_completed_is_not_ready(fake_mqss: FakeMqss) -> None:
    site = site_for(fake_mqss)
    job = site.create(REQUEST).job
    assert job is not None
    for _ in range(3):
        site.state(job)
    for value in (None, "None", ""):
        fake_mqss.script("result", "no_result_yet", value=value)
        read = site.result(job)
        assert (read.kind, read.ready) == (ReadKind.GOOD, False)
    assert site.result(job).ready


@pytest.mark.parametrize("options", [{}, {"raw": b"<html>"}, {"body": [1, 2]}])
def test_a_malformed_result_ends_the_wait(fake_mqss: FakeMqss, options: dict[str, Any]) -> None:
    site = site_for(fake_mqss)
    job = site.create(REQUEST).job
    assert job is not None
    for _ in range(3):
        site.state(job)
    fake_mqss.script("result", "malformed_result", **options)
    assert site.result(job).kind is ReadKind.ENDS


def test_check_takes_the_token_and_knows_the_device(fake_mqss: FakeMqss) -> None:
    assert site_for(fake_mqss).check("Q5").kind is JobAnswer.OK
    assert site_for(fake_mqss).check("").kind is JobAnswer.OK
    assert MqssSite("wrong", base_url=fake_mqss.base_url).check("Q5").kind is JobAnswer.REFUSED
    assert site_for(fake_mqss).check("NOPE").kind is JobAnswer.UNKNOWN


def test_the_token_goes_only_in_the_authorization_header_and_nothing_is_cancelled(fake_mqss: FakeMqss) -> None:
    site = site_for(fake_mqss)
    job = site.create(REQUEST).job
    assert job is not None
    site.state(job)
    site.result(job)
    assert fake_mqss.token_seen_outside_authorization() == []
    assert fake_mqss.requests("cancel") == []


def test_the_phases_of_mqss(fake_mqss: FakeMqss) -> None:
    from dunscaith.adapters.sites.mqss import PHASES

    assert PHASES["PENDING"] is Phase.WAITING and PHASES["CANCELLED"] is Phase.CANCELLED
