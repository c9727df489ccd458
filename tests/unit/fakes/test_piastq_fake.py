"""The fake Piast-Q site (PCSS Open QAPI, pcss-qapi 0.3.2): its states, expiry, too many connections, keys, faults."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.fakes.piastq_server import BELL_AQT, DEVICE, FakePiastq

JOB = {"device": DEVICE, "device_name": DEVICE, "shots": 10, "session_id": None, "label_session_id": None,
       "format": "custom1", "program": {"repetitions": 10, **BELL_AQT}, "wait_timeout": 5}  # as pcss-qapi 0.3.2 posts


@pytest.fixture
def site(fake_piastq: FakePiastq) -> FakePiastq:
    return fake_piastq


def keyed(site: FakePiastq, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(base_url=site.base_url, headers={"X-API-Key": site.token}, timeout=timeout)


@pytest.fixture
def client(site: FakePiastq) -> Iterator[httpx.Client]:
    with keyed(site) as c:
        yield c


def submit(client: httpx.Client) -> Any:
    answer = client.post("qdmi/", json=JOB)
    assert answer.status_code == 200, answer.text
    return answer.json()["id"]


def statuses(client: httpx.Client, job: Any, reads: int) -> list[str]:
    return [client.get(f"jobs/{job}").json()["status"] for _ in range(reads)]


# -- failure paths -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_refused_submit_makes_no_job(site: FakePiastq, client: httpx.Client, status: int) -> None:
    site.script("submit", "refuse", status=status)
    assert client.post("qdmi/", json=JOB).status_code == status
    assert site.jobs == {}


def test_a_wrong_key_is_401_and_a_disabled_account_403(site_token: str) -> None:
    with FakePiastq(token=site_token, disabled=True) as fake, keyed(fake) as c:
        assert httpx.post(fake.base_url + "qdmi/", json=JOB, headers={"X-API-Key": "wrong"}).status_code == 401
        assert httpx.post(fake.base_url + "qdmi/", json=JOB,
                          headers={"Authorization": f"Bearer {site_token}"}).status_code == 401
        assert c.post("qdmi/", json=JOB).status_code == 403
        assert fake.jobs == {}


@pytest.mark.parametrize("fault", ["server_error", "redirect", "drop_after_create"])
def test_submit_faults(site: FakePiastq, client: httpx.Client, fault: str) -> None:
    site.script("submit", fault)
    try:
        status: int | None = client.post("qdmi/", json=JOB).status_code
    except httpx.TransportError:
        status = None
    assert len(site.jobs) == (1 if fault == "drop_after_create" else 0)
    assert status == {"server_error": 500, "redirect": 302, "drop_after_create": None}[fault]
    assert not site.trap.saw_token


def test_hang_on_submit_leaves_a_job_the_client_never_learns(site: FakePiastq) -> None:
    site.script("submit", "hang", seconds=30)
    with keyed(site, timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
        impatient.post("qdmi/", json=JOB)
    assert len(site.jobs) == 1


def test_too_many_connections_scripted_then_service_resumes(site: FakePiastq, client: httpx.Client) -> None:
    job = submit(client)
    site.script("status", "too_many_connections", times=2)
    answers = [client.get(f"jobs/{job}") for _ in range(3)]
    assert [a.status_code for a in answers] == [429, 429, 200]
    assert answers[0].json() == {"detail": "too many connections"}
    assert answers[2].json() == {"id": job, "status": "New", "result": None}


def test_too_many_connections_by_itself_over_the_cap(site_token: str) -> None:
    with FakePiastq(token=site_token, max_open=1, hang_seconds=5) as fake:
        fake.script("devices", "hang", seconds=5)
        with keyed(fake, timeout=0.5) as hanging_client:
            hanging = threading.Thread(target=_expect_timeout, args=(hanging_client,))
            hanging.start()
            _await(lambda: fake.requests("devices") != [])
            with keyed(fake) as c:
                answer = c.get("me/token-info")
            hanging.join()
        assert answer.status_code == 429
        assert fake.requests("token_info")[0].fault == "too_many_connections"


def _expect_timeout(client: httpx.Client) -> None:
    with pytest.raises(httpx.ReadTimeout):
        client.get("devices/")


def _await(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@pytest.mark.parametrize(("expiry", "status", "body"), [
    ("detail", 410, {"detail": "result_expired"}), ("status", 200, {"status": "result_expired", "result": None})])
def test_result_expiry(site_token: str, expiry: str, status: int, body: dict[str, Any]) -> None:
    with FakePiastq(token=site_token, expire_results=True, expiry=expiry) as fake, keyed(fake) as c:
        job = submit(c)
        statuses(c, job, 3)
        for _ in range(2):
            answer = c.get(f"jobs/{job}")
            assert answer.status_code == status and body.items() <= answer.json().items()


def test_one_job_can_expire(site: FakePiastq, client: httpx.Client) -> None:
    job = submit(client)
    statuses(client, job, 3)
    site.jobs[str(job)].expired = True
    assert client.get(f"jobs/{job}").json()["status"] == "result_expired"


def test_an_id_no_url_can_hold(site_token: str) -> None:
    with FakePiastq(token=site_token, id_factory=lambda n: f"job\n{n}") as fake, keyed(fake) as c:
        answer = c.post("qdmi/", json=JOB)
        assert answer.json()["id"] == "job\n4101"
        assert c.get("jobs/job%0A4101").json()["status"] == "New"


def test_no_job_list(client: httpx.Client) -> None:
    assert client.get("jobs/").status_code == 405


def test_a_bad_body_or_unknown_device_makes_no_job(site: FakePiastq, client: httpx.Client) -> None:
    assert client.post("qdmi/", content=b"nope").status_code == 422
    assert client.post("qdmi/", json={**JOB, "device": "other", "device_name": "other"}).status_code == 404
    assert client.post("qdmi/", json={**JOB, "shots": 0}).status_code == 422
    assert site.jobs == {}


# -- normal service ------------------------------------------------------------------------------


def test_a_job_goes_new_to_completed_and_gives_its_shots(site: FakePiastq, client: httpx.Client) -> None:
    job = submit(client)
    assert isinstance(job, int)
    assert statuses(client, job, 5) == ["New", "queued", "running", "completed", "completed"]
    done = client.get(f"jobs/{job}").json()
    assert sorted(done["result"]["results"]["Tasks"]) == ["00"] * 5 + ["11"] * 5
    assert site.requests("submit")[0].header("X-API-Key") == site.token
    assert site.requests("cancel") == []


def test_new_forever(site_token: str) -> None:
    with FakePiastq(token=site_token, path=("New",)) as fake, keyed(fake) as c:
        job = submit(c)
        assert set(statuses(c, job, 5)) == {"New"}


def test_token_info_and_devices(client: httpx.Client) -> None:
    assert client.get("me/token-info").json()["username"] == "tester"
    assert [m["name"] for m in client.get("devices/").json()["machines"]] == [DEVICE]


def test_cancel_is_journaled(site: FakePiastq, client: httpx.Client) -> None:
    job = submit(client)
    assert client.post(f"jobs/{job}/cancel").status_code == 200
    assert statuses(client, job, 1) == ["canceled"]
    assert len(site.requests("cancel")) == 1


@pytest.mark.parametrize(("change", "why"), [
    ({"format": "qasm2", "program": "OPENQASM 2.0;"}, "format 'qasm2' is not custom1"),
    ({"wait_timeout": None}, ""),  # present, as the client sends it: the value is not checked
    ({"program": {"repetitions": 9, **BELL_AQT}}, "repetitions must equal shots"),
    ({"program": {"repetitions": 10, "number_of_qubits": 2, "quantum_circuit": [{"operation": "H", "qubit": 0}]}},
     "program:"),
])
def test_the_fake_takes_only_the_body_pcss_qapi_sends(site: FakePiastq, change: dict[str, object], why: str) -> None:
    with httpx.Client(base_url=site.base_url, headers={"X-API-Key": site.token}) as client:
        answer = client.post("qdmi/", json={**JOB, **change})
        missing = client.post("qdmi/", json={k: v for k, v in JOB.items() if k != "wait_timeout"})
    assert missing.status_code == 422 and "not the client's" in missing.json()["detail"]
    if why:
        assert answer.status_code == 422 and why in answer.json()["detail"]
    else:
        assert answer.status_code == 200
