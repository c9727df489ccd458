"""Real processes for the local scheduler: a scheduler in a temporary root, releasers as subprocesses."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.local import LocalScheduler
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectSpec, ObjectView
from dunscaith.domain.model.jobs.resources import NO_NEEDS, Resources
from tests.contract.scheduler_params import remote_run_problem

REPO = Path(__file__).resolve().parents[3]
DEADLINE = 60.0


def wait_for(what: str, condition: Callable[[], object], timeout: float = DEADLINE) -> object:
    """Poll ``condition`` until it returns something true; fail naming ``what`` at the deadline."""
    end = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


@dataclass
class Local:
    root: Path
    scheduler: LocalScheduler
    names: list[JobId] = field(default_factory=list)
    children: list[subprocess.Popen[str]] = field(default_factory=list)

    def create(
        self,
        command: tuple[str, ...],
        *,
        env: dict[str, str] | None = None,
        workdir: str | None = None,
        resources: Resources = NO_NEEDS,
    ) -> tuple[JobId, ObjectId]:
        name = JobId(f"it-{uuid.uuid4().hex[:10]}")
        self.names.append(name)
        spec = ObjectSpec(name=name, nonce=Nonce(uuid.uuid4().hex), command=command, env=env or {}, workdir=workdir,
                          resources=resources)
        answer = self.scheduler.create_held(spec)
        assert answer.outcome is CreateOutcome.CREATED and answer.object_id, answer
        return name, answer.object_id

    def view(self, name: JobId, object_id: ObjectId) -> ObjectView:
        result = self.scheduler.query([name], confirm_absent=True)
        assert result.complete, result.detail
        (view,) = [v for v in result.objects if v.object_id == object_id]
        return view

    def directory(self, object_id: ObjectId) -> Path:
        return self.scheduler.base / object_id

    def releaser(self, object_id: ObjectId, *args: str) -> subprocess.Popen[str]:
        child = subprocess.Popen(
            [sys.executable, "-m", "tests.integration.local_scheduler.releaser", str(self.root), object_id, *args],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.children.append(child)
        return child


def read_until(child: subprocess.Popen[str], line: str) -> None:
    """Read the releaser's progress lines until ``line`` (it prints one per step)."""
    assert child.stdout is not None
    seen = []
    for got in child.stdout:
        seen.append(got.strip())
        if got.strip() == line:
            return
    pytest.fail(f"the releaser ended before printing {line!r}; it printed {seen}")


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Local]:
    problem = remote_run_problem()
    if problem:
        pytest.skip(problem)
    root = tmp_path / "records"
    made = Local(root, LocalScheduler(root, grace_seconds=1.0))
    yield made
    for child in made.children:
        if child.poll() is None:
            child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    for name in made.names:
        try:
            made.scheduler.stop_by_name(name)
        except Exception:  # teardown: the test's own assertion is what matters
            pass
