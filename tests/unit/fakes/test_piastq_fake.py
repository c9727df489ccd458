"""The fake Piast-Q site (PCSS task API): its states, expiry, too many connections, keys and faults."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.fakes.piastq_server import FakePiastq

TASK = {"machine": "piastq-aqt", "payload": {"circuit": "OPENQASM 2.0;", "shots": 100}}


@pytest.fixture
def site(fake_piastq: FakePiastq) -> FakePiastq:
    return fake_piastq


def keyed(site: FakePiastq, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(base_url=site.base_url, headers={"X-API-Key": site.token}, timeout=timeout)


@pytest.fixture
def client(site: FakePiastq) -> Iterator[httpx.Client]:
    with keyed(site) as c:
        yield c


def submit(client: httpx.Client) -> str:
    answer = client.post("tasks", json=TASK)
    assert answer.status_code == 200, answer.text
    return str(answer.json()["uid"])


def statuses(client: httpx.Client, uid: str, reads: int) -> list[str]:
    return [client.get(f"tasks/{uid}/status").json()["status"] for _ in range(reads)]


# -- failure paths -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
def test_refused_submit_makes_no_task(site: FakePiastq, client: httpx.Client, status: int) -> None:
    site.script("submit", "refuse", status=status)
    assert client.post("tasks", json=TASK).status_code == status
    assert site.jobs == {}


def test_a_wrong_key_is_401_and_a_disabled_account_403(site_token: str) -> None:
    with FakePiastq(token=site_token, disabled=True) as fake, keyed(fake) as c:
        assert httpx.post(fake.base_url + "tasks", json=TASK, headers={"X-API-Key": "wrong"}).status_code == 401
        assert c.post("tasks", json=TASK).status_code == 403
        assert fake.jobs == {}


def test_bearer_mode_reads_the_authorization_header(site_token: str) -> None:
    with FakePiastq(token=site_token, auth="bearer") as fake:
        good = httpx.post(fake.base_url + "tasks", json=TASK, headers={"Authorization": f"Bearer {site_token}"})
        assert good.status_code == 200
        assert httpx.post(fake.base_url + "tasks", json=TASK, headers={"X-API-Key": site_token}).status_code == 401


@pytest.mark.parametrize("fault", ["server_error", "redirect", "drop_after_create"])
def test_submit_faults(site: FakePiastq, client: httpx.Client, fault: str) -> None:
    site.script("submit", fault)
    try:
        status = client.post("tasks", json=TASK).status_code
    except httpx.TransportError:
        status = None
    made = 1 if fault == "drop_after_create" else 0
    assert len(site.jobs) == made
    assert status == {"server_error": 500, "redirect": 302, "drop_after_create": None}[fault]
    assert not site.trap.saw_token


def test_hang_on_submit_leaves_a_task_the_client_never_learns(site: FakePiastq) -> None:
    site.script("submit", "hang", seconds=30)
    with keyed(site, timeout=0.3) as impatient, pytest.raises(httpx.ReadTimeout):
        impatient.post("tasks", json=TASK)
    assert len(site.jobs) == 1


def test_too_many_connections_scripted_then_service_resumes(site: FakePiastq, client: httpx.Client) -> None:
    uid = submit(client)
    site.script("status", "too_many_connections", times=2)
    answers = [client.get(f"tasks/{uid}/status") for _ in range(3)]
    assert [a.status_code for a in answers] == [429, 429, 200]
    assert answers[0].json() == {"detail": "too many connections"}
    assert answers[2].json() == {"status": "New"}


def test_too_many_connections_by_itself_over_the_cap(site_token: str) -> None:
    with FakePiastq(token=site_token, max_open=1, hang_seconds=5) as fake:
        fake.script("machines", "hang", seconds=5)
        with httpx.Client(base_url=fake.base_url, timeout=0.5) as hanging_client:
            hanging = threading.Thread(target=_expect_timeout, args=(hanging_client,))
            hanging.start()
            _await(lambda: fake.requests("machines") != [])
            with keyed(fake) as c:
                answer = c.get("machines/queue-count")
            hanging.join()
        assert answer.status_code == 429
        assert fake.requests("queue_count")[0].fault == "too_many_connections"


def _expect_timeout(client: httpx.Client) -> None:
    with pytest.raises(httpx.ReadTimeout):
        client.get("machines")


def _await(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


@pytest.mark.parametrize(
    ("expiry", "status", "body"), [("detail", 410, {"detail": "result_expired"}), ("empty", 200, {})]
)
def test_result_expiry(site_token: str, expiry: str, status: int, body: object) -> None:
    with FakePiastq(token=site_token, expire_results=True, expiry=expiry) as fake, keyed(fake) as c:
        uid = submit(c)
        assert statuses(c, uid, 4)[-1] == "Completed"
        for _ in range(2):
            answer = c.get(f"tasks/{uid}/results")
            assert (answer.status_code, answer.json()) == (status, body)


def test_one_task_can_expire(site: FakePiastq, client: httpx.Client) -> None:
    uid = submit(client)
    statuses(client, uid, 4)
    site.jobs[uid].expired = True
    assert client.get(f"tasks/{uid}/results").status_code == 410


def test_a_uid_no_url_can_hold(site_token: str) -> None:
    with FakePiastq(token=site_token, uid_factory=lambda n: f"task\n{n}") as fake, keyed(fake) as c:
        answer = c.post("tasks", json=TASK)
        assert answer.json()["uid"] == "task\n1"
        assert c.get("tasks/task%0A1/status").json() == {"status": "New"}


def test_no_job_list(client: httpx.Client) -> None:
    assert client.get("tasks").status_code == 405


def test_a_bad_body_or_unknown_machine_makes_no_task(site: FakePiastq, client: httpx.Client) -> None:
    assert client.post("tasks", content=b"nope").status_code == 422
    assert client.post("tasks", json={"machine": "other", "payload": {}}).status_code == 404
    assert site.jobs == {}


# -- normal service ------------------------------------------------------------------------------


def test_a_task_goes_new_to_completed_and_gives_results(site: FakePiastq, client: httpx.Client) -> None:
    uid = submit(client)
    assert client.get(f"tasks/{uid}/results").json() == {}
    assert statuses(client, uid, 5) == ["New", "Queued", "Running", "Completed", "Completed"]
    assert client.get(f"tasks/{uid}/results").json() == {"00": 50, "11": 50}
    entry = site.requests("submit")[0]
    assert entry.header("X-API-Key") == site.token
    assert site.requests("cancel") == []


def test_new_forever(site_token: str) -> None:
    with FakePiastq(token=site_token, path=("New",)) as fake, keyed(fake) as c:
        uid = submit(c)
        assert set(statuses(c, uid, 5)) == {"New"}


def test_machines_and_health_need_no_key(site: FakePiastq) -> None:
    assert httpx.get(site.base_url + "machines").json() == {"names": ["piastq-aqt"]}
    assert httpx.get(site.origin + "/api/health/test-connection").status_code == 200


def test_cancel_is_journaled(site: FakePiastq, client: httpx.Client) -> None:
    uid = submit(client)
    assert client.post(f"tasks/{uid}/cancel").status_code == 200
    assert statuses(client, uid, 1) == ["Cancelled"]
    assert len(site.requests("cancel")) == 1
