"""One real single-node Slurm 22.05 (with slurmdbd accounting) for the whole test session.

Started on first use (``tests.infra.slurm.shared_cluster``, shared with the scheduler contract suite),
stopped at the end of the session; skipped, naming what is missing, when the Debian packages
are not installed (``bash .ci/install-packages``) or when not run as root (the daemons run as root).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, ObjectView, QueryResult
from tests.infra.slurm import SlurmTestCluster, SlurmUnavailable, shared_cluster, stop_shared_cluster

T = TypeVar("T")


@pytest.fixture(scope="session")
def slurm_cluster() -> SlurmTestCluster:
    try:
        return shared_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(str(exc))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Stop the cluster at the end of the session (after the contract suite too, if it ran)."""
    stop_shared_cluster()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture
def config(slurm_cluster: SlurmTestCluster) -> SlurmClusterConfig:
    return SlurmClusterConfig(name="test", env=slurm_cluster.env)


@pytest.fixture
def scheduler(config: SlurmClusterConfig) -> SlurmCliScheduler:
    return SlurmCliScheduler(config)


def new_name() -> tuple[JobId, Nonce]:
    token = secrets.token_hex(4)
    return JobId(f"dsc-{token}"), Nonce(f"n-{token}-{secrets.token_hex(4)}")


def wait_for(what: str, probe: Callable[[], T | Literal[False] | None], timeout: float = 60.0,
             every: float = 0.5) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: T | Literal[False] | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


def seen(scheduler: SlurmCliScheduler, name: JobId, object_id: str) -> ObjectView | None:
    """The object as a supervisor's query (absence confirmed) reports it, or None."""
    return only_view(scheduler.query([name], confirm_absent=True), object_id)


def created(answer: CreateAnswer) -> ObjectId:
    """The id of the object ``answer`` made; the test fails here, with the scheduler's detail, if none was."""
    assert answer.object_id is not None, answer.detail
    return answer.object_id


def only_view(result: QueryResult, object_id: str) -> ObjectView | None:
    for view in result.objects:
        if view.object_id == object_id:
            return view
    return None
