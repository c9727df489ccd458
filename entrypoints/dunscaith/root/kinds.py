"""The kinds dunscaith knows: a scheduler kind, or a store kind, is its package plus one line here
(docs/architecture.md "Add a scheduler", "Add a store backend").

A line names the kind and its package's kind module, imported when the kind is first asked about (its
capabilities, its settings model, opening it): importing this registry costs nothing on the front door's
lean paths, and a kind module imports nothing heavy at its top. Everything else reads the kinds from here:
the settings (a ``[clusters.NAME]`` table's model, the values of ``records.backend``), the container and
the plain roots (opening a cluster's scheduler, a store), routing (whether a store's records are shared)
and the use cases (what a kind declares it cannot do: ``domain/model/jobs/kinds.py``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from dunscaith.adapters.kind_settings import ClusterSettings
    from dunscaith.adapters.scheduler.opening import Opening, SchedulerKind
    from dunscaith.adapters.store.opening import StoreKind
    from dunscaith.domain.model.jobs.kinds import SchedulerCapabilities
    from dunscaith.ports.cluster_probe import ClusterProbe
    from dunscaith.ports.scheduler import Scheduler

# A scheduler kind's name (a table's ``adapter``) -> its kind module (adapters/scheduler/opening.py).
SCHEDULER_KINDS: dict[str, str] = {}


def scheduler_kind(name: str, module: str) -> None:
    """Register a scheduler kind: its name and its package's kind module (not imported here)."""
    SCHEDULER_KINDS[name] = module


# A store kind's name (``records.backend``) -> its kind module (adapters/store/opening.py).
STORE_KINDS: dict[str, str] = {}


def store_kind(name: str, module: str) -> None:
    """Register a store kind: its name and its package's kind module (not imported here)."""
    STORE_KINDS[name] = module


# --- the scheduler kinds: one line each -------------------------------------------------------------------
scheduler_kind("local", "dunscaith.adapters.scheduler.local.kind")
scheduler_kind("slurm", "dunscaith.adapters.scheduler.slurm.kind")
scheduler_kind("gridengine", "dunscaith.adapters.scheduler.gridengine.kind")
# --- the store kinds: one line each (the first is records.backend's default) -------------------------------
store_kind("sqlite", "dunscaith.adapters.store.sqlite.kind")
store_kind("postgresql", "dunscaith.adapters.store.postgres.kind")


class UnknownKind(LookupError):
    """No kind of that name is registered."""


def _module(path: str) -> object:
    # through the import statement's own machinery, which `python -X importtime` times (it does not see
    # an import_module call): a kind's modules, and what they import, are measured as every other import
    __import__(path)
    return sys.modules[path]


def _registered(kinds: dict[str, str], name: str, unknown: str) -> object:
    """The kind module registered as ``name``; UnknownKind saying ``unknown`` when none is."""
    module = kinds.get(name)
    if module is None:
        raise UnknownKind(unknown)
    return _module(module)


def _file_of(module: str) -> str | None:
    """The file of ``module``, found without importing it nor running a package of it that is not imported yet."""
    from importlib.machinery import PathFinder

    parts = module.split(".")
    search: list[str] | None = None
    for end in range(1, len(parts) + 1):
        name = ".".join(parts[:end])
        loaded = sys.modules.get(name)
        spec = loaded.__spec__ if loaded is not None else PathFinder.find_spec(name, search)
        if spec is None:
            return None
        if end == len(parts):
            return spec.origin
        search = list(spec.submodule_search_locations or [])
    return None


def settings_sources() -> tuple[list[str], list[str]]:
    """What the settings' validation takes from the registered kinds, found without importing a kind: each
    line (a kind's name and module), and the files of each kind module and of the ``settings.py`` beside it
    (where a kind's package keeps its settings model). The remembered settings' key holds them
    (settings_cache.settings_key): a kind registered, removed or whose model changed validates them again."""
    import os

    lines = [f"scheduler {name} {module}" for name, module in SCHEDULER_KINDS.items()]
    lines += [f"store {name} {module}" for name, module in STORE_KINDS.items()]
    files = []
    for module in (*SCHEDULER_KINDS.values(), *STORE_KINDS.values()):
        found = _file_of(module)
        if found is not None:
            files += [found, os.path.join(os.path.dirname(found), "settings.py")]
    return lines, files


def scheduler(name: str) -> SchedulerKind:
    """The kind module of scheduler kind ``name``; UnknownKind when none is registered."""
    unknown = f"no scheduler of kind {name!r} (kinds: {', '.join(SCHEDULER_KINDS)})"
    return cast("SchedulerKind", _registered(SCHEDULER_KINDS, name, unknown))


def capabilities(adapter: str) -> SchedulerCapabilities:
    """What the kind a job's record names declares of itself (the domain receives it); a kind no longer
    registered declares nothing (no limit known)."""
    from dunscaith.domain.model.jobs.kinds import ANY_KIND

    return scheduler(adapter).CAPABILITIES if adapter in SCHEDULER_KINDS else ANY_KIND


def cluster_models() -> dict[str, type[ClusterSettings]]:
    """Each scheduler kind's settings model, by the name a table's ``adapter`` gives it."""
    return {name: scheduler(name).settings_model() for name in SCHEDULER_KINDS}


def open_scheduler(kind: str, opening: Opening) -> AbstractContextManager[Scheduler]:
    return scheduler(kind).open_scheduler(opening)


def open_probe(kind: str, opening: Opening) -> ClusterProbe:
    return scheduler(kind).open_probe(opening)


def store(name: str) -> StoreKind:
    """The kind module of store kind ``name``; UnknownKind when none is registered (never taken for shared)."""
    unknown = f"no store of kind {name!r} (records.backend: {', '.join(STORE_KINDS)})"
    return cast("StoreKind", _registered(STORE_KINDS, name, unknown))


def records_shared(backend: str) -> bool:
    """Whether a store of this kind may hold a job recorded on another host (routing asks, before typer)."""
    return store(backend).SHARED_BY_LOGIN_NODES


def store_of_dialect(dialect: str) -> StoreKind:
    """The store kind whose migrations run on ``dialect`` (migrations/env.py)."""
    for name in STORE_KINDS:
        if dialect == store(name).DIALECT:
            return store(name)
    raise UnknownKind(f"no store kind migrates a {dialect} database (kinds: {', '.join(STORE_KINDS)})")
