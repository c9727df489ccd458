"""The fake VLQ site (LEXIS UserOrg + HEAppE) keeps the server's rules and applies its faults."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from cryptography.fernet import Fernet

from tests.fakes.vlq_server import (
    CLUSTER_ID,
    CONFIGURING,
    FAILED,
    INIT_NODE_TYPE,
    INIT_TEMPLATE,
    PROJECT,
    RUN_NODE_TYPE,
    RUN_TEMPLATE,
    WAITING_FOR_ACCOUNT,
    FakeVlq,
)

CM = "/heappe/JobManagement/"
FT = "/heappe/FileTransfer/"


@pytest.fixture
def site(fake_vlq: FakeVlq) -> FakeVlq:
    return fake_vlq


@pytest.fixture
def client(site: FakeVlq) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=site.origin, headers={"Authorization": f"Bearer {site.token}"}, timeout=5) as c:
        yield c


def spec(name: str = "order-1", env: dict[str, str] | None = None, init: bool = False) -> dict[str, Any]:
    variables = [{"Name": k, "Value": v} for k, v in (env or {}).items()]
    return {
        "JobSpecification": {
            "Name": name,
            "ProjectId": 77,
            "ClusterId": CLUSTER_ID,
            "FileTransferMethodId": 5,
            "EnvironmentVariables": variables,
            "Tasks": [
                {
                    "Name": f"{name}-task",
                    "MinCores": 1,
                    "MaxCores": 1,
                    "WalltimeLimit": 30 if init else 7200,
                    "ClusterNodeTypeId": INIT_NODE_TYPE if init else RUN_NODE_TYPE,
                    "CommandTemplateId": INIT_TEMPLATE if init else RUN_TEMPLATE,
                    "TemplateParameterValues": [],
                }
            ],
        }
    }


def envelope(token: str) -> tuple[str, bytes]:
    """qaas's envelope: USER_JWT_PWD = base64(password), user_token.enc = base64(Fernet(sha256(password)))."""
    password = secrets.token_urlsafe(37)[:50].encode()
    key = base64.urlsafe_b64encode(hashlib.sha256(password).digest())
    return base64.b64encode(password).decode(), base64.b64encode(Fernet(key).encrypt(token.encode()))


def create(client: httpx.Client, **kw: Any) -> dict[str, Any]:
    answer = client.post(CM + "CreateJob", json=spec(**kw))
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def upload(client: httpx.Client, job: dict[str, Any], files: dict[str, bytes]) -> httpx.Response:
    task = job["Tasks"][0]["Id"]
    return client.post(
        FT + "UploadFilesToJobExecutionDir",
        params={"JobId": job["Id"], "TaskId": task},
        files=[("files", (name, content)) for name, content in files.items()],
    )


def submit(client: httpx.Client, job_id: object) -> httpx.Response:
    return client.put(CM + "SubmitJob", json={"CreatedJobInfoId": job_id})


def info(client: httpx.Client, job_id: Any) -> dict[str, Any]:
    return dict(client.get(CM + "CurrentInfoForJob", params={"SubmittedJobInfoId": job_id}).json())


def download(client: httpx.Client, job: dict[str, Any], name: str) -> httpx.Response:
    task = job["Tasks"][0]["Id"]
    path = f"/{job['Id']}/{task}/{name}"
    return client.post(FT + "DownloadFileFromCluster", json={"SubmittedJobInfoId": job["Id"], "RelativeFilePath": path})


# -- failure paths -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403, 413, 429])
def test_a_refused_create_makes_no_job(site: FakeVlq, client: httpx.Client, status: int) -> None:
    site.script("create", "refuse" if status in (401, 403) else "answer", status=status, body={"title": "x"})
    assert client.post(CM + "CreateJob", json=spec()).status_code == status
    assert site.jobs == {}


def test_an_invalid_specification_is_404_validation_problem(client: httpx.Client, site: FakeVlq) -> None:
    answer = client.post(CM + "CreateJob", json={"JobSpecification": {"Name": "x" * 51}})
    assert answer.status_code == 404
    assert answer.json()["title"] == "Validation Problem"
    assert site.jobs == {}


@pytest.mark.parametrize(
    ("fault", "options"),
    [("server_error", {"status": 502, "commit": True}), ("drop_after_create", {})],
    ids=["502-after-insert", "answer-lost"],
)
def test_create_lost_after_commit_leaves_a_configuring_job(
    site: FakeVlq, client: httpx.Client, fault: str, options: dict[str, Any]
) -> None:
    site.script("create", fault, **options)
    if fault == "server_error":
        assert client.post(CM + "CreateJob", json=spec()).status_code == 502
    else:
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(CM + "CreateJob", json=spec())
    (job,) = site.jobs.values()
    assert job.state == CONFIGURING
    listed = client.get(CM + "ListJobsForCurrentUser").json()
    assert [j["Name"] for j in listed] == ["order-1"]  # a person can find it by the order's name


def test_upload_failed_answers_200_and_keeps_nothing(site: FakeVlq, client: httpx.Client) -> None:
    job = create(client)
    site.script("upload", "upload_failed")
    answer = upload(client, job, {"circuit_0000.qasm": b"OPENQASM 2.0;"})
    assert answer.status_code == 200
    assert answer.json() == [{"FileName": "circuit_0000.qasm", "Succeeded": False, "Path": None}]
    assert site.jobs[int(str(job["Id"]))].files == {}


def test_upload_to_an_unknown_job_is_500(client: httpx.Client) -> None:
    answer = client.post(
        FT + "UploadFilesToJobExecutionDir", params={"JobId": 9, "TaskId": 9}, files={"files": ("a", b"")}
    )
    assert answer.status_code == 500


def test_submit_dropped_before_commit_leaves_configuring(site: FakeVlq, client: httpx.Client) -> None:
    job = create(client)
    site.script("submit", "drop")
    with pytest.raises(httpx.RemoteProtocolError):
        submit(client, job["Id"])
    assert info(client, job["Id"])["State"] == CONFIGURING


def test_submit_dropped_after_commit_moves_on_and_a_second_submit_is_404(site: FakeVlq, client: httpx.Client) -> None:
    job = create(client)
    site.script("submit", "drop_after_create")
    with pytest.raises(httpx.RemoteProtocolError):
        submit(client, job["Id"])
    assert info(client, job["Id"])["State"] != CONFIGURING
    again = submit(client, job["Id"])
    assert again.status_code == 404
    assert again.json()["detail"] == "Unable to submit the job (incorrect job state)."
    assert site.job_making_requests() == 3


def test_a_submit_body_over_94_bytes_is_413(site: FakeVlq, client: httpx.Client) -> None:
    job = create(client)
    answer = client.put(CM + "SubmitJob", json={"CreatedJobInfoId": job["Id"], "Padding": "x" * 100})
    assert answer.status_code == 413
    assert site.jobs[int(str(job["Id"]))].state == CONFIGURING


def test_unknown_job_and_missing_file(client: httpx.Client) -> None:
    answer = client.get(CM + "CurrentInfoForJob", params={"SubmittedJobInfoId": 4242})
    assert (answer.status_code, answer.json()["detail"]) == (404, "Job '4242' does not exist in the HEAppE.")
    job = create(client)
    assert download(client, job, "results.json").json() is None  # still Configuring: null
    submit(client, job["Id"])
    assert download(client, job, "nope.txt").status_code == 400


def test_a_wrong_token_is_401_problem_details(site: FakeVlq) -> None:
    answer = httpx.get(site.origin + CM + "ListJobsForCurrentUser", headers={"Authorization": "Bearer x"})
    assert answer.status_code == 401
    assert answer.json()["title"] == "Unauthorized Access"


def test_a_redirect_goes_to_the_trap_which_sees_nothing(site: FakeVlq, client: httpx.Client) -> None:
    site.script("create", "redirect", status=307)
    answer = client.post(CM + "CreateJob", json=spec())
    assert answer.status_code == 307
    assert answer.headers["Location"].startswith(site.trap.origin)
    assert site.trap.journal == [] and not site.trap.saw_token
    assert site.jobs == {}


# -- normal service ------------------------------------------------------------------------------


def test_userorg_points_at_the_fake_heappe(site: FakeVlq, client: httpx.Client) -> None:
    (project,) = client.get("/userorg/api/Project", params={"ProjectShortName": PROJECT}).json()
    assert project["ShortName"] == PROJECT
    (resource,) = client.get("/userorg/api/ProjectResource", params={"ProjectShortName": PROJECT}).json()
    specs = {s["Key"]: s["Value"] for s in resource["Assignments"][0]["Specifications"]}
    assert specs["HEAPPE_URL"] == site.heappe_url
    assert client.get("/userorg/api/Project", params={"ProjectShortName": "other"}).json() == []
    (cluster,) = client.get("/heappe/ClusterInformation/ListAvailableClusters").json()
    assert [n["Name"] for n in cluster["NodeTypes"]] == ["init_queue", "compute_queue"]


def test_a_job_in_three_steps_with_its_envelope(site: FakeVlq, client: httpx.Client) -> None:
    pwd, enc = envelope(site.token)
    job = create(client, env={"USER_JWT_PWD": pwd, "Q_COMMAND": "backend_run"})
    assert job["State"] == CONFIGURING
    uploaded = upload(client, job, {"user_token.enc": enc, "circuit_0000.qasm": b"OPENQASM 2.0;"}).json()
    assert [u["Succeeded"] for u in uploaded] == [True, True]
    assert submit(client, job["Id"]).json()["State"] == 2
    states = [info(client, job["Id"])["State"] for _ in range(5)]
    assert states == [2, 4, 8, 16, 16]
    finished = info(client, job["Id"])
    assert finished["TotalAllocatedTime"] == 3.0
    counts = json.loads(base64.b64decode(download(client, job, "results.json").json()))
    assert counts == {"00": 50, "11": 50}
    fake_job = site.jobs[int(str(job["Id"]))]
    assert fake_job.envelope_ok is True
    assert site.requests("cancel") == []
    assert site.token_seen_outside_authorization() == []  # the envelope holds the token only encrypted


def test_an_envelope_that_does_not_open_is_flagged(site: FakeVlq, client: httpx.Client) -> None:
    pwd, _ = envelope(site.token)
    _, other = envelope(site.token)
    job = create(client, env={"USER_JWT_PWD": pwd})
    upload(client, job, {"user_token.enc": other})
    assert site.jobs[int(str(job["Id"]))].envelope_ok is False


def test_an_init_job_follows_the_init_path_and_leaves_backend_pkl(client: httpx.Client) -> None:
    job = create(client, name="backend_init_job", env={"Q_COMMAND": "backend_init"}, init=True)
    submit(client, job["Id"])
    assert [info(client, job["Id"])["State"] for _ in range(3)] == [2, 8, 16]
    assert base64.b64decode(download(client, job, "backend.pkl").json()) == b"fake-backend-pickle"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((WAITING_FOR_ACCOUNT, 2, 4, 8, 16), [128, 2, 4, 8, 16]),
        ((CONFIGURING,), [1, 1, 1, 1, 1]),
        ((2, 4, 8, FAILED), [2, 4, 8, 32, 32]),
    ],
    ids=["waiting-for-account", "stuck-configuring", "failed"],
)
def test_configured_paths(site_token: str, path: tuple[int, ...], expected: list[int]) -> None:
    with (
        FakeVlq(token=site_token, path=path) as fake,
        httpx.Client(base_url=fake.origin, headers={"Authorization": f"Bearer {site_token}"}) as c,
    ):
        job = create(c)
        submit(c, job["Id"])
        assert [info(c, job["Id"])["State"] for _ in range(5)] == expected
        if expected[-1] == FAILED:
            stderr = base64.b64decode(download(c, job, "stderr.txt").json()).decode()
            assert "exceeds allocation" in stderr
        if expected[-1] == CONFIGURING:
            assert submit(c, job["Id"]).status_code == 200  # still submittable, as on the real server


def test_list_filters_by_state(client: httpx.Client) -> None:
    first = create(client)
    create(client, name="order-2")
    submit(client, first["Id"])
    listed = client.get(CM + "ListJobsForCurrentUser", params={"jobStates": "1"}).json()
    assert [j["Name"] for j in listed] == ["order-2"]
    assert len(client.get(CM + "ListJobsForCurrentUser").json()) == 2
