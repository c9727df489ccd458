"""What a store kind is: the module its package registers (``entrypoints/dunscaith/root/kinds.py``), and what
opening the store is given. docs/architecture.md "Add a store backend".

A kind module (``adapters/store/<kind>/kind.py``) declares whether its records are shared by login
nodes and the SQL dialect it migrates, and how the store is opened, looked for, and checked; it imports
nothing heavy at its top (routing asks it whether records are shared before typer is imported).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dunscaith.ports.job_store import JobStore

if TYPE_CHECKING:
    from dunscaith.adapters.kind_settings import StoreSettings
    from dunscaith.ports.host import HostInfo


class OpenedStore(JobStore, Protocol):
    """A store as its kind opens it: the port, and ``close`` for the command that opened it."""

    # why it was opened to be read without a lock (a full or read-only record root: every write is refused,
    # docs/record-backing.md), or None
    read_unlocked: str | None

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class StoreOpening:
    root: Path  # records.root
    host: Callable[[], HostInfo]
    # the jobs this host's pointers say are recorded at a location (a record root): a host's own store is
    # never made anew where they name jobs (domain/services/jobs/store_creation.py)
    recorded_in: Callable[[str], Sequence[str]]
    # the [records] table as validated (backend, root and every kind's own keys: settings_model): read when asked
    records: Callable[[], Any]


class StoreKind(Protocol):
    """A store kind's module, as the registry reads it."""

    @property
    def SHARED_BY_LOGIN_NODES(self) -> bool:
        """Whether a store of this kind may hold a job recorded on another host (one every login node opens)."""

    @property
    def DIALECT(self) -> str:
        """The SQL dialect its migrations run on (migrations/env.py); "" for a store without migrations."""

    def settings_model(self) -> type[StoreSettings] | None:
        """Its own keys of the ``[records]`` table (a ``StoreSettings`` subclass), or None: the settings
        compose every registered kind's into the table; ``opening.records()`` is that table, validated."""

    def open_store(self, opening: StoreOpening) -> OpenedStore:
        """The store, migrated and ready; the command closes it (``close()``)."""

    def store_exists(self, opening: StoreOpening) -> bool:
        """Whether there is a store to look in, asked without opening or making one."""

    def write_check(self, store: JobStore) -> str | None:
        """What is wrong with the whole store, checked before a command's first side effect (None: nothing)."""

    def doctor_check(self, store: JobStore) -> str | None:
        """What ``doctor`` reports of the whole store (None: nothing)."""

    def migration_metadata(self) -> list[Any]:
        """The SQLAlchemy metadata its migrations compare against (migrations/env.py)."""
