"""Issue 22 item 14: each site adapter tells a request never written from one that may have arrived.

No network at all (connection refused, name not resolved) is before the first byte: "not sent". A
failure after the request was written (the fake's dropped connection) stays "a job may exist"."""

from __future__ import annotations

import socket
from collections.abc import Callable

import httpx
import pytest

from dunscaith.adapters.sites.http_common import send
from dunscaith.adapters.sites.mqss import MqssSite
from dunscaith.adapters.sites.piastq import PiastqSite
from dunscaith.adapters.sites.vlq import VlqSite
from dunscaith.domain.model.qdevices.answers import JobAnswer, NoAnswer, ReadKind
from dunscaith.ports.site import JobRequest
from tests.fakes.mqss_server import FakeMqss
from tests.fakes.piastq_server import DEVICE as PIASTQ_DEVICE
from tests.fakes.piastq_server import FakePiastq, bell_program

REQUEST = JobRequest(1, "bell", "Q5", "OPENQASM 2.0;\nqreg q[2];\n", 100)
TOKEN = "tok-" + "x" * 30


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unreachable() -> list[str]:
    return [f"http://127.0.0.1:{closed_port()}/", "http://no-such-site.invalid/"]


def raising(exc: type[httpx.HTTPError]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        if issubclass(exc, httpx.RequestError):
            raise exc("simulated", request=request)
        raise exc("simulated")  # pragma: no cover

    return httpx.Client(base_url="http://site.test/", transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("exc", [httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout])
def test_failures_before_the_first_byte_prove_nothing_was_written(exc: type[httpx.HTTPError]) -> None:
    answer = send(raising(exc), "POST", "job")
    assert isinstance(answer, NoAnswer) and not answer.written and answer.detail.startswith("not sent")


@pytest.mark.parametrize("exc", [httpx.WriteError, httpx.WriteTimeout, httpx.ReadError, httpx.ReadTimeout,
                                 httpx.RemoteProtocolError])
def test_failures_after_the_first_byte_may_have_reached_the_site(exc: type[httpx.HTTPError]) -> None:
    answer = send(raising(exc), "POST", "job")
    assert isinstance(answer, NoAnswer) and answer.written


@pytest.mark.parametrize("address", unreachable(), ids=["closed-port", "unresolvable-name"])
def test_mqss_with_no_network_is_not_sent(address: str) -> None:
    site = MqssSite(TOKEN, base_url=address + "v1/", timeout=5)
    answer = site.create(REQUEST)
    assert answer.kind is JobAnswer.NOT_SENT and "nothing left the machine" in answer.detail
    assert site.state("j1").kind is ReadKind.MISSED  # a read with no network is a missed poll, as before


@pytest.mark.parametrize("address", unreachable(), ids=["closed-port", "unresolvable-name"])
def test_piastq_with_no_network_is_not_sent(address: str) -> None:
    site = PiastqSite(TOKEN, base_url=address + "api/", timeout=5)
    answer = site.create(JobRequest(1, "bell", PIASTQ_DEVICE, bell_program(10), 10))
    assert answer.kind is JobAnswer.NOT_SENT


@pytest.mark.parametrize("address", unreachable(), ids=["closed-port", "unresolvable-name"])
def test_vlq_with_no_network_is_not_sent(address: str) -> None:
    make: Callable[[], VlqSite] = lambda: VlqSite(TOKEN, "P-QTEST", userorg_url=address + "userorg/",  # noqa: E731
                                                  heappe_url=address, timeout=5)
    assert make().prepare("VLQ").kind is JobAnswer.NOT_SENT  # the init job: never made
    answer = make().create(REQUEST)
    assert answer.kind is JobAnswer.NOT_SENT and answer.detail.startswith("not sent")


def test_a_connection_dropped_after_the_request_stays_a_job_may_exist(fake_mqss: FakeMqss,
                                                                       fake_piastq: FakePiastq) -> None:
    fake_mqss.script("submit", "drop_after_create")
    assert MqssSite(fake_mqss.token, base_url=fake_mqss.base_url, timeout=5).create(REQUEST).kind is JobAnswer.UNKNOWN
    fake_piastq.script("submit", "drop")
    piastq = PiastqSite(fake_piastq.token, base_url=fake_piastq.base_url, timeout=5)
    assert piastq.create(JobRequest(1, "b", PIASTQ_DEVICE, bell_program(10), 10)).kind is JobAnswer.UNKNOWN
