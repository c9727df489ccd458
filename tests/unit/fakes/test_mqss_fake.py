"""The fake MQSS site does what its docstring says: the API, the states, each fault, the journal, the trap."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest

from tests.fakes.mqss_server import TIME_FORMAT, FakeMqss

JOB = {
    "circuit": 'OPENQASM 2.0; include "qelib1.inc"; qreg q[2]; creg c[2]; h q[0]; cx q[0],q[1]; measure q -> c;',
    "circuit_format": "qasm",
    "resource_name": "Q5",
    "shots": 100,
    "no_modify": False,
    "queued": False,
}


@pytest.fixture
def client(fake_mqss: FakeMqss) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {fake_mqss.token}"}
    with httpx.Client(base_url=fake_mqss.base_url, headers=headers, timeout=5.0) as c:
        yield c


def authed(site: FakeMqss, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(base_url=site.base_url, headers={"Authorization": f"Bearer {site.token}"}, timeout=timeout)


def submit(client: httpx.Client) -> httpx.Response:
    return client.post("job", json=JOB)


# -- failure paths first -------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_refuse_answers_the_status_and_makes_no_job(fake_mqss: FakeMqss, client: httpx.Client, status: int) -> None:
    fake_mqss.script("submit", "refuse", status=status)
    answer = submit(client)
    assert answer.status_code == status
    assert fake_mqss.jobs == {}
    (entry,) = fake_mqss.requests("submit")
    assert (entry.fault, entry.status, entry.authorized) == ("refuse", status, True)


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_makes_no_job(fake_mqss: FakeMqss, client: httpx.Client, status: int) -> None:
    fake_mqss.script("submit", "server_error", status=status)
    assert submit(client).status_code == status
    assert fake_mqss.jobs == {}


def test_server_error_after_commit_makes_the_job(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("submit", "server_error", status=502, commit=True)
    assert submit(client).status_code == 502
    assert len(fake_mqss.jobs) == 1


def test_too_many_is_429_with_retry_after(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("status", "too_many")
    uuid = submit(client).json()["uuid"]
    answer = client.get(f"job/{uuid}/status")
    assert answer.status_code == 429
    assert answer.headers["Retry-After"] == "1"
    assert client.get(f"job/{uuid}/status").json() == {"status": "PENDING"}


def test_redirect_points_at_the_trap_which_sees_nothing_when_not_followed(
    fake_mqss: FakeMqss, client: httpx.Client
) -> None:
    fake_mqss.script("submit", "redirect")
    answer = submit(client)
    assert answer.status_code == 302
    assert answer.headers["Location"] == fake_mqss.trap.origin + "/v1/job"
    assert fake_mqss.trap.origin != fake_mqss.origin
    assert fake_mqss.jobs == {}
    assert fake_mqss.trap.journal == []
    assert not fake_mqss.trap.saw_token


def test_the_trap_records_the_token_of_a_client_that_follows(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("status", "redirect", status=307)
    request = urllib.request.Request(
        fake_mqss.base_url + "job/x/status", headers={"Authorization": f"Bearer {fake_mqss.token}"}
    )
    with urllib.request.urlopen(request, timeout=5) as answer:  # urllib follows and keeps the header
        assert json.load(answer)["uuid"] == "trap-job"
    (entry,) = fake_mqss.trap.journal
    assert entry.path == "/v1/job/x/status"
    assert fake_mqss.trap.saw_token


def test_a_following_httpx_client_reaches_the_trap_without_the_token(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("status", "redirect", status=307)
    headers = {"Authorization": f"Bearer {fake_mqss.token}"}
    with httpx.Client(headers=headers, follow_redirects=True, timeout=5) as following:
        assert following.get(fake_mqss.base_url + "job/x/status").status_code == 200
    assert len(fake_mqss.trap.journal) == 1  # httpx drops Authorization across origins
    assert not fake_mqss.trap.saw_token


@pytest.mark.parametrize("reset", [False, True], ids=["close", "reset"])
def test_drop_after_create_makes_the_job_and_gives_no_answer(
    fake_mqss: FakeMqss, client: httpx.Client, reset: bool
) -> None:
    fake_mqss.script("submit", "drop_after_create", reset=reset)
    with pytest.raises(httpx.TransportError):
        submit(client)
    assert len(fake_mqss.jobs) == 1
    (entry,) = fake_mqss.requests("submit")
    assert (entry.fault, entry.status) == ("drop_after_create", None)
    assert submit(client).status_code == 200  # normal service resumes
    assert len(fake_mqss.jobs) == 2


def test_drop_gives_no_answer_and_makes_no_job(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("submit", "drop")
    with pytest.raises(httpx.RemoteProtocolError):
        submit(client)
    assert fake_mqss.jobs == {}


def test_hang_outlasts_the_client_and_the_job_is_made(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("submit", "hang", seconds=30)
    with authed(fake_mqss, timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
        submit(impatient)
    assert len(fake_mqss.jobs) == 1
    assert fake_mqss.requests("submit")[0].status is None


def test_hang_without_commit_makes_no_job(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("submit", "hang", seconds=30, commit=False)
    with authed(fake_mqss, timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
        submit(impatient)
    assert fake_mqss.jobs == {}


def test_a_hang_is_bounded_then_the_connection_closes(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("status", "hang", seconds=0.2)
    with pytest.raises(httpx.RemoteProtocolError):
        client.get("job/none/status")


def _request_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "process_request" in t.name]


def test_stopping_the_fake_ends_a_hanging_request_thread(site_token: str) -> None:
    # Only this fake's threads count: other tests in the same process may still be winding theirs down.
    before = set(_request_threads())
    site = FakeMqss(token=site_token, hang_seconds=300)
    with site:
        site.script("status", "hang")
        with httpx.Client(timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
            impatient.get(site.base_url + "job/x/status", headers={"Authorization": f"Bearer {site_token}"})
        assert set(_request_threads()) - before
    deadline = time.monotonic() + 10
    while set(_request_threads()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert set(_request_threads()) - before == set()


def test_half_body_makes_the_job_and_truncates_the_answer(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("submit", "half_body")
    with pytest.raises(httpx.RemoteProtocolError, match=r"complete message body"):
        submit(client)
    assert len(fake_mqss.jobs) == 1


def test_no_job_id_makes_the_job_and_answers_an_empty_object(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("submit", "no_job_id")
    answer = submit(client)
    assert (answer.status_code, answer.json()) == (200, {})
    assert len(fake_mqss.jobs) == 1


@pytest.mark.parametrize(
    ("body", "raw"), [({"ERROR": "no budget"}, None), (None, b"RESOURCE NOT FOUND")], ids=["error-key", "text"]
)
def test_answer_gives_any_body_and_makes_no_job(
    fake_mqss: FakeMqss, client: httpx.Client, body: object, raw: bytes | None
) -> None:
    fake_mqss.script("submit", "answer", status=200, body=body, raw=raw)
    answer = submit(client)
    assert answer.status_code == 200
    assert answer.content == (raw if raw is not None else json.dumps(body).encode())
    assert fake_mqss.jobs == {}


def _complete(client: httpx.Client) -> str:
    uuid = submit(client).json()["uuid"]
    states = [client.get(f"job/{uuid}/status").json()["status"] for _ in range(3)]
    assert states == ["PENDING", "WAITING", "COMPLETED"]
    return str(uuid)


@pytest.mark.parametrize("value", [None, "None", ""])
def test_no_result_yet_right_after_completed_then_the_result(
    fake_mqss: FakeMqss, client: httpx.Client, value: str | None
) -> None:
    uuid = _complete(client)
    fake_mqss.script("result", "no_result_yet", value=value)
    first = client.get(f"job/{uuid}/result").json()
    assert first["result"] == value
    assert first["timestamp_completed"] == ""
    second = client.get(f"job/{uuid}/result").json()
    assert json.loads(second["result"]) == {"00": 50, "11": 50}


def test_malformed_result_is_not_json_text(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    uuid = _complete(client)
    fake_mqss.script("result", "malformed_result")
    fake_mqss.script("result", "malformed_result", raw=b"<html>oops")
    text = client.get(f"job/{uuid}/result").json()["result"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    with pytest.raises(json.JSONDecodeError):
        client.get(f"job/{uuid}/result").json()
    assert json.loads(client.get(f"job/{uuid}/result").json()["result"]) == {"00": 50, "11": 50}


def test_a_fault_applies_n_times_in_order_then_normal_service(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    fake_mqss.script("submit", "server_error", times=2)
    fake_mqss.script("submit", "refuse", status=403)
    assert fake_mqss.pending_faults("submit") == 3
    codes = [submit(client).status_code for _ in range(4)]
    assert codes == [500, 500, 403, 200]
    assert [e.fault for e in fake_mqss.requests("submit")] == ["server_error", "server_error", "refuse", None]
    assert fake_mqss.pending_faults("submit") == 0


def test_script_refuses_unknown_names(fake_mqss: FakeMqss) -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        fake_mqss.script("submit", "explode")
    with pytest.raises(ValueError, match="unknown request kind"):
        fake_mqss.script("sbumit", "refuse")
    with pytest.raises(ValueError, match="result request only"):
        fake_mqss.script("submit", "no_result_yet")


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": "token-without-bearer"}], ids=str
)
def test_a_wrong_or_missing_token_is_401_and_makes_no_job(fake_mqss: FakeMqss, headers: dict[str, str]) -> None:
    answer = httpx.post(fake_mqss.base_url + "job", json=JOB, headers=headers, timeout=5)
    assert answer.status_code == 401
    assert fake_mqss.jobs == {}
    assert fake_mqss.journal[0].authorized is False


@pytest.mark.parametrize(
    "body",
    [b"not json", json.dumps({**JOB, "extra": 1}).encode(), json.dumps({**JOB, "shots": "100"}).encode()],
    ids=["not-json", "extra-field", "shots-text"],
)
def test_a_bad_job_body_is_400_and_makes_no_job(fake_mqss: FakeMqss, client: httpx.Client, body: bytes) -> None:
    assert client.post("job", content=body).status_code == 400
    assert fake_mqss.jobs == {}


def test_an_unknown_resource_is_not_found(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    answer = client.post("job", json={**JOB, "resource_name": "Nope"})
    assert (answer.status_code, answer.text) == (404, "RESOURCE NOT FOUND")
    assert client.get("resources/Nope").text == "RESOURCE NOT FOUND"


# -- normal service ------------------------------------------------------------------------------


def test_a_job_goes_pending_waiting_completed_and_gives_its_counts(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    answer = submit(client)
    assert answer.status_code == 200
    uuid = answer.json()["uuid"]
    assert client.get(f"job/{uuid}/result").json()["result"] is None
    assert _states(client, uuid, 5) == ["PENDING", "WAITING", "COMPLETED", "COMPLETED", "COMPLETED"]
    result = client.get(f"job/{uuid}/result").json()
    assert json.loads(result["result"]) == {"00": 50, "11": 50}
    stamps = {k: datetime.strptime(result[k], TIME_FORMAT) for k in result if k.startswith("timestamp_")}
    assert (stamps["timestamp_completed"] - stamps["timestamp_scheduled"]).total_seconds() == 2.5
    job = fake_mqss.jobs[uuid]
    assert (job.resource_name, job.shots, job.circuit) == ("Q5", 100, JOB["circuit"])
    entry = fake_mqss.requests("submit")[0]
    assert entry.json() == JOB
    assert entry.header("authorization") == f"Bearer {fake_mqss.token}"
    assert fake_mqss.token_seen_outside_authorization() == []
    assert fake_mqss.requests("cancel") == []


def _states(client: httpx.Client, uuid: str, reads: int) -> list[str]:
    return [client.get(f"job/{uuid}/status").json()["status"] for _ in range(reads)]


def test_a_configured_path_and_pace(site_token: str) -> None:
    with FakeMqss(token=site_token, path=("PENDING", "FAILED"), reads_per_state=2) as site, authed(site) as c:
        uuid = submit(c).json()["uuid"]
        assert _states(c, uuid, 4) == ["PENDING", "PENDING", "FAILED", "FAILED"]
        assert c.get(f"job/{uuid}/result").json()["result"] is None


def test_a_job_can_stay_pending_forever(site_token: str) -> None:
    with FakeMqss(token=site_token, path=("PENDING",)) as site, authed(site) as c:
        uuid = submit(c).json()["uuid"]
        assert set(_states(c, uuid, 6)) == {"PENDING"}


def test_jobs_are_editable_and_can_be_added(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    job = fake_mqss.add_job(shots=10, state="COMPLETED")
    job.result = [{"0": 4, "1": 6}]
    assert client.get(f"job/{job.uuid}/status").json() == {"status": "COMPLETED"}
    assert json.loads(client.get(f"job/{job.uuid}/result").json()["result"]) == [{"0": 4, "1": 6}]
    assert fake_mqss.job_making_requests() == 0


def test_cancel_is_journaled_and_cancels(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    uuid = submit(client).json()["uuid"]
    assert client.delete(f"job/{uuid}").status_code == 200
    assert client.get(f"job/{uuid}/status").json() == {"status": "CANCELLED"}
    assert client.get(f"job/{uuid}/cancel_reason").json() == {"cancel_reason": "cancelled by user"}
    assert len(fake_mqss.requests("cancel")) == 1


def test_unknown_job_and_unknown_route_are_404(client: httpx.Client) -> None:
    assert client.get("job/nope/status").status_code == 404
    assert client.get("jobs").status_code == 404


def test_the_job_list_is_off_unless_asked(fake_mqss: FakeMqss, client: httpx.Client, site_token: str) -> None:
    submit(client)
    assert client.get("job").status_code == 404
    with FakeMqss(token=site_token, job_list=True) as site, authed(site) as c:
        uuid = submit(c).json()["uuid"]
        assert c.get("job").json() == {"jobs": [uuid]}


def test_resources_and_pending_jobs(client: httpx.Client) -> None:
    assert set(client.get("resources").json()) == {"Q5", "AQT20"}
    assert client.get("resources/Q5").json()["qubits"] == 5
    submit(client)
    assert client.get("resources/Q5/num_pending_jobs").json() == {"num_pending_jobs": 1}


def test_the_token_anywhere_but_the_authorization_header_is_flagged(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    client.get(f"job/x/status?t={fake_mqss.token}")
    client.post("job", json={**JOB, "circuit": fake_mqss.token})
    flagged = fake_mqss.token_seen_outside_authorization()
    assert [e.kind for e in flagged] == ["status", "submit"]
    assert all(e.holds(fake_mqss.token) for e in fake_mqss.journal)


def test_the_journal_keeps_order_time_and_body(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    before = time.time()
    submit(client)
    client.get("resources")
    entries = fake_mqss.journal
    assert [e.seq for e in entries] == [1, 2]
    assert [(e.method, e.path, e.kind) for e in entries] == [
        ("POST", "/v1/job", "submit"),
        ("GET", "/v1/resources", "resources"),
    ]
    assert before <= entries[0].time <= entries[1].time
    assert entries[0].json() == JOB


def test_base_url_is_like_the_real_default(fake_mqss: FakeMqss) -> None:
    assert fake_mqss.base_url == f"http://127.0.0.1:{fake_mqss.port}/v1/"


def test_urllib_sees_a_refusal_as_an_http_error(fake_mqss: FakeMqss) -> None:
    fake_mqss.script("resources", "refuse")
    request = urllib.request.Request(fake_mqss.base_url + "resources")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=5)
    assert caught.value.code == 401
    caught.value.close()


def test_a_hamiltonian_job_is_made_and_read_like_a_circuit_job(fake_mqss: FakeMqss, client: httpx.Client) -> None:
    body = {"resource_name": "Q5", "interaction_str": "ZZ", "coefficients_str": "1.0"}
    uuid = client.post("hamiltonian_job", json=body).json()["uuid"]
    assert client.get(f"hamiltonian_job/{uuid}/status").json() == {"status": "PENDING"}
    assert fake_mqss.job_making_requests() == 1
