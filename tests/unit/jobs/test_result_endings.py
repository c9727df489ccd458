"""``submit --json`` for the endings that are dunscaith's own, with the container on fakes: the result
object carries ``error`` and ``exit_code_from`` says "dunscaith", even with --job-exit-code (docs/json.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from typer.testing import CliRunner

from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.ids import ObjectId
from dunscaith.entrypoints.dunscaith.app import app
from dunscaith.entrypoints.dunscaith.root.container import Container
from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings, RecordsSettings, SuperviseSection
from tests.fakes.dunscaith_adapters import FakeAdapters


@pytest.fixture
def wired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Container, FakeScheduler]:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    for name in list(__import__("os").environ):
        if name.startswith("DUNSCAITH_"):
            monkeypatch.delenv(name)
    container = Container()
    settings = DunscaithSettings(records=RecordsSettings(root=tmp_path / "records"),
                                 supervise=SuperviseSection(poll=0.001, giveup=0.2, wait=0.05, absence=0.01))
    container.settings.override(providers.Object(settings))
    container.adapters.override(FakeAdapters())
    scheduler = container.adapters.schedulers()("local")
    assert isinstance(scheduler, FakeScheduler)
    return container, scheduler


def _submit(container: Container, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(app, ["submit", "--json", "--job-exit-code", *args], obj=container,
                                standalone_mode=False)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.return_value, json.loads(result.stdout), result.stderr


def test_a_supervisor_that_gave_up_says_so_in_the_object(wired: tuple[Container, FakeScheduler]) -> None:
    container, scheduler = wired
    scheduler.query = lambda names, **kw: (_ for _ in ()).throw(OSError("controller down"))  # type: ignore
    code, result, err = _submit(container, "--name", "stuck", "--", "true")
    assert code == 4 and "gave up" in err
    assert (result["ending"], result["outcome"], result["exit_code"], result["exit_code_from"]) == (
        "gave-up", None, 4, "dunscaith")
    assert result["error"]["code"] == "gave-up" and result["error"]["exit_code"] == 4


def test_work_outstanding_wins_over_the_jobs_code(wired: tuple[Container, FakeScheduler]) -> None:
    container, scheduler = wired
    real = scheduler.release

    def release(object_id: ObjectId) -> None:
        real(object_id)
        scheduler.vanish(object_id)

    scheduler.release = release  # type: ignore[method-assign]
    code, result, _ = _submit(container, "--name", "gone", "--", "true")
    assert code == 5
    assert (result["ending"], result["outcome"]["result"], result["exit_code_from"]) == (
        "outstanding", "escalated", "dunscaith")
    assert result["error"]["code"] == "outstanding" and result["outstanding"]


def test_a_refused_job_exits_2_with_the_refusal_in_the_object(wired: tuple[Container, FakeScheduler]) -> None:
    container, scheduler = wired
    scheduler.refuse_next_create("no such partition")
    code, result, _ = _submit(container, "--name", "refused", "--", "true")
    assert code == 2
    assert result["outcome"]["result"] == "refused" and result["error"]["code"] == "refused"
    assert "no such partition" in result["error"]["message"]
