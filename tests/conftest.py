"""Shared fixtures. Real components are started here (or in the tier's conftest) on first use."""

from __future__ import annotations

import pytest

from tests.infra.postgres import PostgresTestServer, PostgresUnavailable, shared_server, stop_shared_server


@pytest.fixture(scope="session")
def postgres_server() -> PostgresTestServer:
    """One real PostgreSQL 15 for the session (tests/infra/postgres.py); skipped, naming what is missing,
    where the package is not installed (``bash .ci/install-packages``), and failed instead under CI."""
    try:
        return shared_server()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def postgres_db(postgres_server: PostgresTestServer) -> str:
    """A new, empty database of that server for one test."""
    return postgres_server.new_database()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    stop_shared_server()
