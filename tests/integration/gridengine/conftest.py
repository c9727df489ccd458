"""One real single-node Son of Grid Engine 8.1.9 for the whole test session (``tests.infra.gridengine``, shared
with the scheduler contract suite), stopped at the end of the session; skipped, naming what is missing, without
the Debian packages (``bash .ci/install-packages``) or root (the daemons run as root)."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal, TypeVar

import pytest

from dunscaith.adapters.scheduler.gridengine import GridEngineConfig, GridEngineScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from tests.infra.gridengine import GridEngineTestCluster, GridEngineUnavailable, shared_cluster, stop_shared_cluster

T = TypeVar("T")
CLIENTS = ("qsub", "qstat", "qrls", "qhold", "qdel", "qmod", "qacct", "qconf")


@pytest.fixture(scope="session")
def sge() -> GridEngineTestCluster:
    try:
        return shared_cluster()
    except GridEngineUnavailable as exc:
        pytest.skip(str(exc))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    stop_shared_cluster()


@pytest.fixture
def config(sge: GridEngineTestCluster, tmp_path: Path) -> GridEngineConfig:
    workdir = tmp_path / "work"
    workdir.mkdir()
    return GridEngineConfig(name="test", env=sge.env, workdir=workdir, ledger_dir=tmp_path / "ledger")


@pytest.fixture
def scheduler(config: GridEngineConfig) -> GridEngineScheduler:
    return GridEngineScheduler(config)


def new_name() -> tuple[JobId, Nonce]:
    token = secrets.token_hex(4)
    return JobId(f"dsc-{token}"), Nonce(f"n-{token}-{secrets.token_hex(4)}")


def bin_dir(path: Path, replaced: Mapping[str, str]) -> Path:
    """A bin_dir with Grid Engine's clients, ``replaced`` ones by a ``/bin/sh`` script (``$REAL`` names the real
    program's directory)."""
    path.mkdir(parents=True)
    for name in CLIENTS:
        target = path / name
        if name in replaced:
            target.write_text(f"#!/bin/sh\nREAL=/usr/bin\n{replaced[name]}\n")
            target.chmod(0o755)
        else:
            os.symlink(f"/usr/bin/{name}", target)
    return path


def wait_for(what: str, probe: Callable[[], T | Literal[False] | None], timeout: float = 60.0, every: float = 0.2) -> T:
    deadline = time.monotonic() + timeout
    last: T | Literal[False] | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")
