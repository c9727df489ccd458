"""pytest fixtures for the fake sites. Import them into a conftest.py:

    from tests.fakes.fixtures import fake_mqss, fake_piastq, fake_vlq, site_token  # noqa: F401

``site_token`` is a fresh random token per test (so a test can search every output for it). Each
``fake_*`` is a started fake with that token, stopped after the test, with hangs bounded to 5 seconds.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from tests.fakes.mqss_server import FakeMqss
from tests.fakes.piastq_server import FakePiastq
from tests.fakes.vlq_server import FakeVlq


@pytest.fixture
def site_token() -> str:
    return "tok-" + secrets.token_urlsafe(30)


@pytest.fixture
def fake_mqss(site_token: str) -> Iterator[FakeMqss]:
    with FakeMqss(token=site_token, hang_seconds=5.0) as site:
        yield site


@pytest.fixture
def fake_vlq(site_token: str) -> Iterator[FakeVlq]:
    with FakeVlq(token=site_token, hang_seconds=5.0) as site:
        yield site


@pytest.fixture
def fake_piastq(site_token: str) -> Iterator[FakePiastq]:
    with FakePiastq(token=site_token, hang_seconds=5.0) as site:
        yield site
