"""The composition root itself: every name the settings accept has an adapter, each opened once."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from dependency_injector import providers

from dunscaith.adapters.scheduler.slurm.settings import SlurmClusterSettings
from dunscaith.entrypoints.dunscaith.root import kinds
from dunscaith.entrypoints.dunscaith.root.container import Container
from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings, RecordsSettings


def test_every_records_backend_the_settings_accept_is_a_registered_store_kind() -> None:
    assert get_args(RecordsSettings.model_fields["backend"].annotation) == tuple(kinds.STORE_KINDS)
    for name in kinds.STORE_KINDS:  # each declares what routing and the migrations ask, and opens its store
        kind = kinds.store(name)
        assert isinstance(kind.SHARED_BY_LOGIN_NODES, bool) and kind.DIALECT
        assert callable(kind.open_store) and callable(kind.store_exists) and callable(kind.doctor_check)
    assert kinds.store_of_dialect("postgresql") is kinds.store("postgresql")


def test_an_unknown_store_kind_is_refused_not_counted_as_shared() -> None:
    assert kinds.records_shared("postgresql") and not kinds.records_shared("sqlite")
    with pytest.raises(kinds.UnknownKind, match=r"no store of kind 'mysql' \(records\.backend: sqlite, postgresql\)"):
        kinds.records_shared("mysql")


def test_every_registered_scheduler_kind_has_its_own_model_an_opening_and_a_probe() -> None:
    for kind, model in kinds.cluster_models().items():  # each kind's table is validated by its own model
        assert get_args(model.model_fields["adapter"].annotation) == (kind,)
        declared = kinds.scheduler(kind)
        assert callable(declared.open_scheduler) and callable(declared.open_probe)


def test_an_unknown_scheduler_kind_is_refused_by_name() -> None:
    with pytest.raises(kinds.UnknownKind, match="no scheduler of kind 'pbs' \\(kinds: local, slurm, gridengine\\)"):
        kinds.scheduler("pbs")


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
