"""PiastqSite against the fake PCSS Open QAPI (pcss-qapi 0.3.2): each answer classified as the Piast-Q page says."""

from __future__ import annotations

import json

import pytest

from dunscaith.adapters.sites.piastq import STATES, PiastqSite
from dunscaith.domain.model.qdevices.answers import JobAnswer, Phase, ReadKind
from dunscaith.ports.site import JobRequest
from tests.fakes.piastq_server import DEVICE, FakePiastq

REQUEST = JobRequest(1, "bell-1", DEVICE, "OPENQASM 2.0;\nqreg q[2];\n", 10)


def site_for(fake: FakePiastq, timeout: float = 2.0) -> PiastqSite:
    return PiastqSite(fake.token, base_url=fake.base_url, timeout=timeout)


def made(site: PiastqSite) -> str:
    answer = site.create(REQUEST)
    assert answer.kind is JobAnswer.OK and answer.job is not None, answer
    return answer.job


def test_a_job_is_made_by_post_qdmi_and_its_integer_id_read(fake_piastq: FakePiastq) -> None:
    job = made(site_for(fake_piastq))
    assert job == "4101" and job in fake_piastq.jobs
    sent = json.loads(fake_piastq.requests("submit")[0].body)
    assert (sent["device"], sent["shots"], sent["format"], sent["program"]) == (DEVICE, 10, "qasm2", REQUEST.circuit)
    assert fake_piastq.requests("submit")[0].header("X-API-Key") == fake_piastq.token


@pytest.mark.parametrize("status", [401, 403])
def test_401_or_403_is_a_refusal(fake_piastq: FakePiastq, status: int) -> None:
    fake_piastq.script("submit", "refuse", status=status)
    answer = site_for(fake_piastq).create(REQUEST)
    assert (answer.kind, answer.status) == (JobAnswer.REFUSED, status) and not fake_piastq.jobs


def test_a_wrong_key_is_refused(fake_piastq: FakePiastq) -> None:
    assert PiastqSite("wrong", base_url=fake_piastq.base_url).create(REQUEST).kind is JobAnswer.REFUSED


@pytest.mark.parametrize("fault", ["server_error", "redirect", "drop_after_create", "half_body", "no_job_id",
                                   "too_many_connections", "too_many", "hang"])
def test_any_other_answer_to_the_job_request_is_unknown_sent_once(fake_piastq: FakePiastq, fault: str) -> None:
    if fault == "hang":
        fake_piastq.script("submit", fault, seconds=2)
    else:
        fake_piastq.script("submit", fault)
    answer = site_for(fake_piastq, timeout=0.5).create(REQUEST)
    assert answer.kind is JobAnswer.UNKNOWN and answer.job is None
    assert fake_piastq.job_making_requests() == 1 and not fake_piastq.trap.journal


def test_states_are_read_until_completed_then_the_shots_as_counts(fake_piastq: FakePiastq) -> None:
    site = site_for(fake_piastq)
    job = made(site)
    assert [site.state(job).site_state for _ in range(4)] == ["New", "queued", "running", "completed"]
    result = site.result(job)
    assert result.ready and result.counts == {"00": 5, "11": 5} and result.seconds is None


def test_too_many_connections_and_failed_reads_are_missed_polls(fake_piastq: FakePiastq) -> None:
    site = site_for(fake_piastq, timeout=0.5)
    job = made(site)
    fake_piastq.script("status", "too_many_connections")
    fake_piastq.script("status", "server_error", status=503)
    fake_piastq.script("status", "drop")
    fake_piastq.script("status", "hang", seconds=2)
    assert [site.state(job).kind for _ in range(5)] == [ReadKind.MISSED] * 4 + [ReadKind.GOOD]


def test_too_many_connections_under_another_status_is_a_missed_poll(site_token: str) -> None:
    with FakePiastq(token=site_token, too_many_status=503) as fake:
        site = site_for(fake)
        job = made(site)
        fake.script("status", "too_many_connections")
        read = site.state(job)
        assert read.kind is ReadKind.MISSED and "too many connections" in read.detail


@pytest.mark.parametrize("expiry", ["status", "detail"])
def test_an_expired_result_is_result_expired(site_token: str, expiry: str) -> None:
    with FakePiastq(token=site_token, expire_results=True, expiry=expiry) as fake:
        site = site_for(fake)
        job = made(site)
        for _ in range(3):
            site.state(job)
        read = site.state(job)
        assert read.phase is Phase.COMPLETED and read.site_state == "result_expired"
        result = site.result(job)
        assert (result.kind, result.expired) == (ReadKind.ENDS, True)


def test_failed_and_canceled_end_the_job(site_token: str) -> None:
    for word, phase in (("failed", Phase.FAILED), ("canceled", Phase.CANCELLED)):
        with FakePiastq(token=site_token, path=("New", word)) as fake:
            site = site_for(fake)
            job = made(site)
            assert [site.state(job).phase for _ in range(2)] == [Phase.WAITING, phase]


def test_a_redirect_or_4xx_on_a_read_ends_the_wait_and_the_trap_sees_no_key(fake_piastq: FakePiastq) -> None:
    site = site_for(fake_piastq)
    job = made(site)
    fake_piastq.script("status", "redirect", status=307)
    assert site.state(job).kind is ReadKind.ENDS and not fake_piastq.trap.saw_token
    assert site.state("999").kind is ReadKind.ENDS


def test_the_state_table_names_the_seeds_new_and_the_clients_words() -> None:
    assert STATES["new"] is Phase.WAITING and STATES["failed"] is Phase.FAILED
    assert STATES["canceled"] is Phase.CANCELLED and STATES["result_expired"] is Phase.COMPLETED


def test_check_takes_the_key_and_lists_the_devices(fake_piastq: FakePiastq) -> None:
    assert site_for(fake_piastq).check(DEVICE).kind is JobAnswer.OK
    assert site_for(fake_piastq).check("NOPE").kind is JobAnswer.UNKNOWN
    assert PiastqSite("wrong", base_url=fake_piastq.base_url).check(DEVICE).kind is JobAnswer.REFUSED
    assert fake_piastq.requests("submit") == []


def test_the_key_goes_only_in_its_header_and_nothing_is_cancelled(fake_piastq: FakePiastq) -> None:
    site = site_for(fake_piastq)
    job = made(site)
    site.state(job)
    site.result(job)
    assert fake_piastq.requests("cancel") == []
    for entry in fake_piastq.journal:
        others = [f"{k}: {v}" for k, v in entry.headers if k.lower() != "x-api-key"]
        texts = [entry.path, json.dumps(entry.query), *others]
        assert not any(fake_piastq.token in x for x in texts) and fake_piastq.token.encode() not in entry.body
