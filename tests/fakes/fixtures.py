"""pytest fixtures for the fake sites. Import them into a conftest.py:

    from tests.fakes.fixtures import fake_mqss, site_token  # noqa: F401

``site_token`` is a fresh random token per test (so a test can search every output for it);
``fake_mqss`` is a started ``FakeMqss`` with that token, stopped after the test, with hangs bounded to
5 seconds.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from tests.fakes.mqss_server import FakeMqss


@pytest.fixture
def site_token() -> str:
    return "tok-" + secrets.token_urlsafe(30)


@pytest.fixture
def fake_mqss(site_token: str) -> Iterator[FakeMqss]:
    with FakeMqss(token=site_token, hang_seconds=5.0) as site:
        yield site
