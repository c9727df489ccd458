"""VlqSite against the fake LEXIS UserOrg + HEAppE: the init job, the three steps, each answer classified."""

from __future__ import annotations

import base64
import json

import pytest

from dunscaith.adapters.sites.vlq import JOB_STATES, VlqSite
from dunscaith.domain.model.qdevices.answers import JobAnswer, Phase, ReadKind
from dunscaith.ports.site import JobRequest
from tests.fakes.vlq_server import CONFIGURING, FAILED, FINISHED, PROJECT, WAITING_FOR_ACCOUNT, FakeVlq

REQUEST = JobRequest(1, "bell-1", "VLQ", "OPENQASM 2.0;\nqreg q[2];\n", 100)


def site_for(fake: FakeVlq, timeout: float = 2.0, secrets: list[str] | None = None, **kw: object) -> VlqSite:
    sink = secrets if secrets is not None else []
    return VlqSite(fake.token, PROJECT, userorg_url=fake.userorg_url + "/", heappe_url=fake.heappe_url,
                   timeout=timeout, on_secret=sink.append, init_poll_seconds=0.001, **kw)  # type: ignore[arg-type]


def made(fake: FakeVlq, site: VlqSite) -> str:
    answer = site.create(REQUEST)
    assert answer.kind is JobAnswer.OK and answer.job is not None, answer
    return answer.job


def test_the_init_job_runs_to_finished_before_the_first_order_and_is_not_an_order(fake_vlq: FakeVlq) -> None:
    site = site_for(fake_vlq)
    answer = site.prepare("VLQ")
    assert answer.kind is JobAnswer.OK
    (job,) = fake_vlq.jobs.values()
    assert job.is_init and job.state == FINISHED and job.envelope_ok is True
    assert job.env["Q_OPTIONAL_ARG"] == "VLQ" and job.spec["Tasks"][0]["WalltimeLimit"] == 30


@pytest.mark.parametrize("fault", [("info", "server_error"), ("info", "drop"), ("info", "redirect")])
def test_the_init_job_wait_ends_at_the_first_failed_read(fake_vlq: FakeVlq, fault: tuple[str, str]) -> None:
    fake_vlq.script(*fault)
    answer = site_for(fake_vlq).prepare("VLQ")
    assert answer.kind is not JobAnswer.OK and answer.job is not None  # the init job's id, for "Under way"
    assert len(fake_vlq.requests("info")) == 1


def test_an_init_job_that_fails_fails_the_prepare(site_token: str) -> None:
    with FakeVlq(token=site_token, init_path=(2, FAILED)) as fake:
        answer = site_for(fake).prepare("VLQ")
        assert answer.kind is JobAnswer.UNKNOWN and "Failed" in answer.detail


def test_a_metered_job_is_created_uploaded_and_submitted_with_its_envelope(fake_vlq: FakeVlq) -> None:
    secrets: list[str] = []
    site = site_for(fake_vlq, secrets=secrets)
    job = made(fake_vlq, site)
    record = fake_vlq.jobs[int(job)]
    assert record.state == CONFIGURING and record.name == "bell-1"
    assert site.upload(job, REQUEST).kind is JobAnswer.OK
    assert set(record.files) >= {"user_token.enc", "circuit_0000.qasm", "run_kwargs.json"}
    assert record.envelope_ok is True
    assert site.submit(job).kind is JobAnswer.OK and record.submits == 1
    password = base64.b64decode(record.env["USER_JWT_PWD"]).decode()
    assert secrets == [password, record.env["USER_JWT_PWD"]]  # the filter learnt both before CreateJob went


def test_the_job_is_read_through_every_state_then_its_result_with_its_seconds(fake_vlq: FakeVlq) -> None:
    site = site_for(fake_vlq)
    job = made(fake_vlq, site)
    site.upload(job, REQUEST)
    site.submit(job)
    words = [site.state(job).site_state for _ in range(4)]
    assert words == ["Submitted", "Queued", "Running", "Finished"]
    result = site.result(job)
    assert result.ready and result.counts == {"00": 50, "11": 50} and result.seconds == pytest.approx(3.0)


def test_heappe_job_state_flags_map_to_phases() -> None:
    assert {v: name for v, (name, _) in JOB_STATES.items()} == {
        1: "Configuring", 2: "Submitted", 4: "Queued", 8: "Running", 16: "Finished", 32: "Failed",
        64: "Canceled", 128: "WaitingForServiceAccount", 256: "Deleted"}
    assert JOB_STATES[1][1] is Phase.CONFIGURING and JOB_STATES[128][1] is Phase.WAITING
    assert JOB_STATES[32][1] is Phase.FAILED and JOB_STATES[64][1] is JOB_STATES[256][1] is Phase.CANCELLED


def test_a_submit_answered_waiting_for_service_account_is_taken(site_token: str) -> None:
    with FakeVlq(token=site_token, path=(WAITING_FOR_ACCOUNT, 2, 16)) as fake:
        site = site_for(fake)
        job = made(fake, site)
        site.upload(job, REQUEST)
        assert site.submit(job).kind is JobAnswer.OK
        assert site.state(job).site_state == "WaitingForServiceAccount"


@pytest.mark.parametrize(("status", "kind"), [(401, JobAnswer.REFUSED), (403, JobAnswer.REFUSED),
                                               (404, JobAnswer.REFUSED), (413, JobAnswer.REFUSED),
                                               (429, JobAnswer.REFUSED), (400, JobAnswer.UNKNOWN),
                                               (500, JobAnswer.UNKNOWN), (502, JobAnswer.UNKNOWN)])
def test_which_answers_to_create_job_are_refusals(fake_vlq: FakeVlq, status: int, kind: JobAnswer) -> None:
    fake_vlq.script("create", "answer", status=status, body={"title": "x", "status": status, "detail": "x"})
    assert site_for(fake_vlq).create(REQUEST).kind is kind


@pytest.mark.parametrize(("status", "kind"), [(401, JobAnswer.REFUSED), (400, JobAnswer.REFUSED),
                                               (404, JobAnswer.UNKNOWN), (403, JobAnswer.UNKNOWN),
                                               (500, JobAnswer.UNKNOWN), (502, JobAnswer.UNKNOWN)])
def test_which_answers_to_submit_job_are_refusals(fake_vlq: FakeVlq, status: int, kind: JobAnswer) -> None:
    site = site_for(fake_vlq)
    job = made(fake_vlq, site)
    site.upload(job, REQUEST)
    fake_vlq.script("submit", "answer", status=status, body={"title": "x", "status": status, "detail": "x"})
    assert site.submit(job).kind is kind


def test_submit_job_404_incorrect_state_after_a_lost_answer_is_not_a_refusal(fake_vlq: FakeVlq) -> None:
    site = site_for(fake_vlq)
    job = made(fake_vlq, site)
    site.upload(job, REQUEST)
    fake_vlq.script("submit", "drop_after_create")
    assert site.submit(job).kind is JobAnswer.UNKNOWN
    assert site.submit(job).kind is JobAnswer.UNKNOWN  # the server's 404 "incorrect job state"
    assert fake_vlq.jobs[int(job)].submits == 1


@pytest.mark.parametrize("kind", ["create", "submit"])
@pytest.mark.parametrize("fault", ["drop_after_create", "half_body", "hang", "redirect", "server_error"])
def test_a_lost_or_bad_answer_to_a_job_step_is_unknown_and_sent_once(fake_vlq: FakeVlq, kind: str,
                                                                     fault: str) -> None:
    site = site_for(fake_vlq, timeout=0.5)
    job = made(fake_vlq, site) if kind == "submit" else None
    if job:
        site.upload(job, REQUEST)
    if fault == "hang":
        fake_vlq.script(kind, fault, seconds=2)
    else:
        fake_vlq.script(kind, fault)
    answer = site.create(REQUEST) if kind == "create" else site.submit(job or "")
    assert answer.kind is JobAnswer.UNKNOWN
    assert len(fake_vlq.requests(kind)) == 1  # no transport retry
    assert not fake_vlq.trap.journal


@pytest.mark.parametrize("fault", ["upload_failed", "server_error", "drop", "drop_after_create"])
def test_an_upload_not_taken_is_unknown(fake_vlq: FakeVlq, fault: str) -> None:
    site = site_for(fake_vlq)
    job = made(fake_vlq, site)
    fake_vlq.script("upload", fault)
    assert site.upload(job, REQUEST).kind is JobAnswer.UNKNOWN
    assert fake_vlq.jobs[int(job)].state == CONFIGURING


def test_a_failed_read_is_a_missed_poll_and_a_4xx_ends_the_wait(fake_vlq: FakeVlq) -> None:
    site = site_for(fake_vlq, timeout=0.5)
    job = made(fake_vlq, site)
    for fault in ("server_error", "drop"):
        fake_vlq.script("info", fault)
    fake_vlq.script("info", "hang", seconds=2)
    assert [site.state(job).kind for _ in range(4)] == [ReadKind.MISSED] * 3 + [ReadKind.GOOD]
    assert site.state("999999").kind is ReadKind.ENDS  # 404 "does not exist"
    assert site.state("a\nb").kind is ReadKind.ENDS  # not a HEAppE id: never sent


def test_a_finished_job_whose_result_file_is_missing_ends_the_wait(fake_vlq: FakeVlq) -> None:
    site = site_for(fake_vlq)
    job = made(fake_vlq, site)
    site.upload(job, REQUEST)
    site.submit(job)
    for _ in range(4):
        site.state(job)
    fake_vlq.jobs[int(job)].files.pop("results.json")
    assert site.result(job).kind is ReadKind.ENDS


def test_the_project_heappe_url_must_be_the_fixed_address(fake_vlq: FakeVlq) -> None:
    site = VlqSite(fake_vlq.token, PROJECT, userorg_url=fake_vlq.userorg_url + "/",
                   heappe_url="http://127.0.0.1:1/")
    answer = site.prepare("VLQ")
    assert answer.kind is JobAnswer.NOT_SENT and "not this build's VLQ address" in answer.detail
    assert fake_vlq.requests("create") == []


def test_check_takes_the_token_and_finds_the_templates(fake_vlq: FakeVlq) -> None:
    assert site_for(fake_vlq).check("VLQ").kind is JobAnswer.OK
    wrong = VlqSite("wrong", PROJECT, userorg_url=fake_vlq.userorg_url + "/", heappe_url=fake_vlq.heappe_url)
    assert wrong.check("VLQ").kind is JobAnswer.REFUSED
    nope = VlqSite(fake_vlq.token, "P-NONE", userorg_url=fake_vlq.userorg_url + "/", heappe_url=fake_vlq.heappe_url)
    assert nope.check("VLQ").kind is JobAnswer.UNKNOWN
    assert fake_vlq.requests("create") == []


def test_the_token_goes_only_in_the_header_and_the_fernet_file_and_nothing_is_cancelled(fake_vlq: FakeVlq) -> None:
    site = site_for(fake_vlq)
    site.prepare("VLQ")
    job = made(fake_vlq, site)
    site.upload(job, REQUEST)
    site.submit(job)
    site.state(job)
    assert fake_vlq.token_seen_outside_authorization() == []
    assert fake_vlq.requests("cancel", "delete") == []
    assert json.loads(fake_vlq.requests("submit")[-1].body) == {"CreatedJobInfoId": int(job)}
