"""One contract for the Site port, run against the in-memory FakeSite and each real adapter on its fake.

What every site must do the same way: a job made by its steps (CREATE, or CREATE UPLOAD SUBMIT), read
until it ends, its counts collected; a wrong token refused and no job made; check makes no job; a lost
answer to the job-making request is UNKNOWN and sent once; nothing is ever cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from dunscaith.adapters.sites.fake import FakeSite
from dunscaith.adapters.sites.mqss import MqssSite
from dunscaith.adapters.sites.piastq import PiastqSite
from dunscaith.adapters.sites.vlq import VlqSite
from dunscaith.domain.model.qdevices.answers import ENDED_PHASES, JobAnswer, Phase, ReadKind
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName, Step
from dunscaith.ports.site import JobRequest, Site
from tests.fakes.mqss_server import FakeMqss
from tests.fakes.piastq_server import DEVICE, FakePiastq
from tests.fakes.vlq_server import PROJECT, FakeVlq

TOKEN = "contract-token-0123456789abcdef"
CIRCUIT = "OPENQASM 2.0;\nqreg q[2];\n"


@dataclass
class Case:
    site: Callable[[str], Site]  # token -> adapter
    device: str
    server: Any  # the HTTP fake, or None for the in-memory one
    drop_kind: str  # the fake's kind of the job-making request

    def job_making(self) -> int:
        if self.server is None:
            return 0
        return len(self.server.requests(self.drop_kind))


@pytest.fixture(params=["fake", "mqss", "vlq", "piastq"])
def case(request: pytest.FixtureRequest) -> Iterator[Case]:
    name = request.param
    if name == "fake":
        yield Case(lambda token: FakeSite(SiteName.MQSS, polls_to_finish=2), "Q5", None, "")
    elif name == "mqss":
        with FakeMqss(token=TOKEN, hang_seconds=2) as mqss:
            yield Case(lambda token: MqssSite(token, base_url=mqss.base_url, timeout=2), "Q5", mqss, "submit")
    elif name == "vlq":
        with FakeVlq(token=TOKEN, hang_seconds=2) as vlq:
            yield Case(lambda token: VlqSite(token, PROJECT, userorg_url=vlq.userorg_url + "/",
                                             heappe_url=vlq.heappe_url, timeout=2, init_poll_seconds=0.001),
                       "VLQ", vlq, "create")
    else:
        with FakePiastq(token=TOKEN, hang_seconds=2) as piastq:
            yield Case(lambda token: PiastqSite(token, base_url=piastq.base_url, timeout=2), DEVICE, piastq,
                       "submit")


def make_job(site: Site, request: JobRequest) -> str:
    assert site.prepare(request.device).kind is JobAnswer.OK
    made = site.create(request)
    assert made.kind is JobAnswer.OK and made.job, made
    job = made.job
    if site.steps != (Step.CREATE,):
        assert site.upload(job, request).kind is JobAnswer.OK
        assert site.submit(job).kind is JobAnswer.OK
    return job


def test_a_job_is_made_by_its_steps_read_until_it_ends_and_its_counts_collected(case: Case) -> None:
    site = case.site(TOKEN)
    assert site.steps == TRAITS[site.name].steps
    request = JobRequest(1, "o1", case.device, CIRCUIT, 10)
    job = make_job(site, request)
    phases = []
    for _ in range(10):
        read = site.state(job)
        assert read.kind is ReadKind.GOOD, read
        phases.append(read.phase)
        if read.phase in ENDED_PHASES:
            break
    assert phases[-1] is Phase.COMPLETED
    result = site.result(job)
    assert result.kind is ReadKind.GOOD and result.ready and isinstance(result.counts, dict | list)
    site.close()


def test_a_wrong_token_is_refused_and_makes_no_job(case: Case) -> None:
    if case.server is None:
        pytest.skip("the in-memory site takes any token; its refusals are scripted")
    site = case.site("wrong-token-0123456789")
    answer = site.prepare(case.device)
    if answer.kind is JobAnswer.OK:
        answer = site.create(JobRequest(1, "o1", case.device, CIRCUIT, 10))
    assert answer.kind is JobAnswer.REFUSED
    assert not case.server.jobs
    assert case.site("wrong-token-0123456789").check(case.device).kind is JobAnswer.REFUSED


def test_check_makes_no_job(case: Case) -> None:
    answer = case.site(TOKEN).check(case.device)
    assert answer.kind is JobAnswer.OK, answer
    assert case.job_making() == 0


def test_a_lost_answer_to_the_job_making_request_is_unknown_and_sent_once(case: Case) -> None:
    if case.server is None:
        pytest.skip("the in-memory site has no connection to drop")
    site = case.site(TOKEN)
    assert site.prepare(case.device).kind is JobAnswer.OK
    before = case.job_making()
    case.server.script(case.drop_kind, "drop_after_create")
    answer = site.create(JobRequest(1, "o1", case.device, CIRCUIT, 10))
    assert answer.kind is JobAnswer.UNKNOWN and answer.job is None
    assert case.job_making() == before + 1


def test_nothing_is_ever_cancelled(case: Case) -> None:
    site = case.site(TOKEN)
    job = make_job(site, JobRequest(1, "o1", case.device, CIRCUIT, 10))
    site.state(job)
    if case.server is not None:
        assert case.server.requests("cancel") == []
