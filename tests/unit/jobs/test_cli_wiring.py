"""The job commands with the container's adapters swapped for fakes: every ending maps to its code."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dependency_injector import providers
from typer.testing import CliRunner

from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, ObjectSpec
from dunscaith.entrypoints.dunscaith.app import app
from dunscaith.entrypoints.dunscaith.root.container import Container
from dunscaith.entrypoints.dunscaith.root.settings import (
    DunscaithSettings,
    RecordsSettings,
    ResidualSection,
    SuperviseSection,
)
from tests.fakes.dunscaith_adapters import FakeAdapters

Wired = tuple[Container, FakeScheduler, InMemoryPointers]  # the CLI's container on fakes, and the fakes


@pytest.fixture
def wired(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Wired:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # no configuration file of the user's
    for name in list(__import__("os").environ):
        if name.startswith("DUNSCAITH_"):
            monkeypatch.delenv(name)
    container = Container()
    settings = DunscaithSettings(records=RecordsSettings(root=tmp_path / "records"),
                                 supervise=SuperviseSection(poll=0.001, giveup=0.2, wait=0.05, absence=0.01))
    container.settings.override(providers.Object(settings))
    container.adapters.override(FakeAdapters())
    scheduler = container.adapters.schedulers()("local")
    pointers = container.adapters.pointers()
    assert isinstance(scheduler, FakeScheduler) and isinstance(pointers, InMemoryPointers)
    return container, scheduler, pointers


def invoke(container: Container, *args: str) -> Any:
    result = CliRunner().invoke(app, list(args), obj=container, standalone_mode=False)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_success_returns_0_and_the_pointer_follows_the_state(wired: Wired) -> None:
    container, _, pointers = wired
    result = invoke(container, "submit", "--name", "ok", "--", "true")
    assert result.return_value == 0, result.output
    assert "outcome: succeeded" in result.output
    assert pointers.read(JobId("ok")).state == "succeeded"


def test_a_failed_command_returns_1(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "no", "--", "false").return_value == 1


def test_a_refused_create_returns_2(wired: Wired) -> None:
    container, scheduler, _ = wired
    scheduler.refuse_next_create("no such partition")
    assert invoke(container, "submit", "--name", "refused", "--", "true").return_value == 2


def test_a_scheduler_that_never_answers_returns_4_and_leaves_the_job_unattended(wired: Wired) -> None:
    container, scheduler, _ = wired
    scheduler.query = lambda names, **kw: (_ for _ in ()).throw(OSError("controller down"))  # type: ignore
    result = invoke(container, "submit", "--name", "stuck", "--", "true")
    assert result.return_value == 4
    assert "gave up" in result.output and "controller down" in result.output
    assert "dunscaith supervise stuck" in result.output
    listed = invoke(container, "list")
    assert "job stuck is Unattended" in listed.output


def _first_attempt_never_shows(scheduler: FakeScheduler) -> None:
    scheduler.lose_next_create_reply()
    real = scheduler.create_held

    def create(spec: ObjectSpec) -> CreateAnswer:
        answer = real(spec)
        if scheduler.count("create_held") == 1:  # the first attempt's object never shows
            scheduler.vanish(next(iter(scheduler.objects())))
        return answer

    scheduler.create_held = create  # type: ignore[method-assign]


def test_an_unknown_attempt_goes_to_the_residual_list_and_submit_returns_the_outcome(wired: Wired) -> None:
    container, scheduler, _ = wired
    _first_attempt_never_shows(scheduler)
    result = invoke(container, "submit", "--name", "left", "--", "true")
    assert result.return_value == 0, result.output
    assert "attempt 1: moved to the residual list (unknown)" in result.output
    listed = invoke(container, "list")
    assert "left  residual (unknown: attempt 1, cluster local; added" in listed.output


def test_under_the_manual_policy_work_outstanding_after_the_wait_returns_5_and_lists_it(wired: Wired) -> None:
    container, scheduler, _ = wired
    settings = container.settings()
    container.settings.override(providers.Object(settings.model_copy(update={
        "residual": ResidualSection(policy="manual")})))
    _first_attempt_never_shows(scheduler)
    result = invoke(container, "submit", "--name", "left", "--", "true")
    assert result.return_value == 5, result.output
    assert "attempt 1: unknown outcome" in result.output
    assert "ESCALATION (unknown-attempt)" in result.output
    assert "outcome: succeeded" in result.output


def test_an_object_that_vanishes_is_escalated_and_stays_outstanding(wired: Wired) -> None:
    container, scheduler, _ = wired
    real = scheduler.release

    def release(object_id: ObjectId) -> None:
        real(object_id)
        scheduler.vanish(object_id)

    scheduler.release = release  # type: ignore[method-assign]
    result = invoke(container, "submit", "--name", "gone", "--", "true")
    assert result.return_value == 5  # escalated (not success), and the object is not known to have ended
    assert "ESCALATION (vanished)" in result.output
    assert "outcome: escalated" in result.output


def test_status_json_of_a_settled_job(wired: Wired) -> None:
    import json

    container, _, _ = wired
    invoke(container, "submit", "--name", "done", "--", "true")
    shown = json.loads(invoke(container, "status", "done", "--json").output)
    assert shown["state"] == "succeeded" and shown["settled"] and shown["unattended"] is False


def test_status_reads_one_record_and_list_only_those_it_shows(wired: Wired, monkeypatch: pytest.MonkeyPatch) -> None:
    container, scheduler, _ = wired
    for name in ("a", "b", "c"):
        assert invoke(container, "submit", "--name", name, "--", "true").return_value == 0
    scheduler.query = lambda names, **kw: (_ for _ in ()).throw(OSError("controller down"))  # type: ignore
    assert invoke(container, "submit", "--name", "stuck", "--", "true").return_value == 4
    store = container.adapters.store()
    read: list[str] = []
    for way in ("read", "read_tail"):  # the whole record, or its snapshot and the lines after it
        real = getattr(store, way)

        def reading(job: JobId, real: Callable[[JobId], object] = real) -> object:
            read.append(job)
            return real(job)

        monkeypatch.setattr(store, way, reading)
    shown = invoke(container, "status", "b")
    assert shown.return_value == 0 and shown.output.startswith("b  succeeded")
    assert "job stuck is Unattended" in shown.output  # the notice, from the summaries and the locks
    assert read == ["b"]
    listed = invoke(container, "list")
    assert [line.split()[0] for line in listed.output.splitlines()[:5]] == ["NAME", "stuck", "c", "b", "a"]
    read.clear()
    page = invoke(container, "list", "--limit", "2")
    assert [line.split()[0] for line in page.output.splitlines()[:3]] == ["NAME", "stuck", "c"]
    assert "2 older jobs not shown" in page.output
    assert read == ["stuck", "c"]  # the page it shows, never every record (the rest from the summaries)
