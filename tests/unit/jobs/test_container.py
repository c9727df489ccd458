"""The composition root itself: every name the settings accept has an adapter, each opened once."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from dependency_injector import providers

from dunscaith.entrypoints.dunscaith.container import Adapters, Container
from dunscaith.entrypoints.dunscaith.settings import (
    CLUSTER_KINDS,
    DunscaithSettings,
    RecordsSettings,
    SlurmClusterSettings,
)


def test_every_records_backend_the_settings_accept_has_a_store() -> None:
    store = Adapters.store  # declared a Provider of JobStore; made a Selector, by records.backend
    assert isinstance(store, providers.Selector)
    assert set(store.providers) == set(get_args(RecordsSettings.model_fields["backend"].annotation))


def test_every_cluster_adapter_the_settings_accept_has_a_scheduler() -> None:
    assert set(Adapters.scheduler_kinds.providers) == set(CLUSTER_KINDS)
    for kind, model in CLUSTER_KINDS.items():  # each kind's table is validated by its own model
        assert get_args(model.model_fields["adapter"].annotation) == (kind,)


def test_every_cluster_adapter_can_be_checked() -> None:
    assert set(Adapters.probe_kinds.providers) == set(Adapters.scheduler_kinds.providers)


@pytest.fixture
def container(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Container:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    container = Container()
    container.settings.override(providers.Object(DunscaithSettings(
        records=RecordsSettings(root=tmp_path / "records"), clusters={"big": SlurmClusterSettings(adapter="slurm")})))
    return container


def test_a_cluster_is_opened_once_and_the_supervisor_and_the_sweep_share_it(container: Container) -> None:
    schedulers = container.adapters.schedulers()
    assert schedulers("local") is schedulers("local")
    assert schedulers("big") is schedulers("big") is not schedulers("local")
    assert container.adapters.schedulers() is schedulers  # one set for the command
    container.shutdown_resources()


def test_the_default_store_is_the_sqlite_store_in_the_record_root(container: Container, tmp_path: Path) -> None:
    store = container.adapters.store()
    assert store.identity().backend == "sqlite"
    assert store.location() == str(tmp_path / "records")
    container.shutdown_resources()
