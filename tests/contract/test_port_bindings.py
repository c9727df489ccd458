"""The port bindings catch a drift: a port member the adapters lack fails mypy, naming adapter and member.

The drift made here is the one that stood unnoticed before the bindings existed: the append watch's port
declaring ``release``, which neither store's watch has. It is reached only through the return type of
``JobStore.watch_appends``, so the check goes through the store's binding to the object its method returns.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

DRIFTED = textwrap.dedent('''\
    from collections.abc import Callable
    from typing import Protocol

    from dunscaith.adapters.store.memory import InMemoryStore
    from dunscaith.adapters.store.sqlite.store import SqliteStore
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.ports.job_store import AppendWatch, JobStore


    class DriftedWatch(AppendWatch, Protocol):
        def release(self) -> None: ...


    class DriftedStore(JobStore, Protocol):
        def watch_appends(self, job: JobId, wake: Callable[[], None]) -> DriftedWatch | None: ...


    def job_stores(sqlite: SqliteStore, memory: InMemoryStore) -> None:
        bound: list[DriftedStore] = [sqlite, memory]
        del bound
''')


def _mypy(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *map(str, files)], cwd=REPO, capture_output=True,
                          text=True, check=False)


@pytest.mark.slow
def test_a_port_member_no_adapter_has_fails_mypy_naming_each_adapter(tmp_path: Path) -> None:
    drifted = tmp_path / "drifted_bindings.py"
    drifted.write_text(DRIFTED)

    run = _mypy(drifted)

    assert run.returncode == 1, run.stdout + run.stderr
    assert 'List item 0 has incompatible type "SqliteStore"; expected "DriftedStore"' in run.stdout
    assert 'List item 1 has incompatible type "InMemoryStore"; expected "DriftedStore"' in run.stdout
    assert "watch_appends" in run.stdout
    assert "Found 2 errors in 1 file" in run.stdout


@pytest.mark.slow
def test_the_bindings_of_every_adapter_pass_mypy() -> None:
    run = _mypy(REPO / "tests" / "contract" / "port_bindings.py")

    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.startswith("Success: no issues found")
