"""PostgreSQL as a store kind (``records.backend = "postgresql"``): one database every login node shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from dunscaith.adapters.kind_settings import StoreSettings
    from dunscaith.adapters.store.opening import OpenedStore, StoreOpening
    from dunscaith.adapters.store.postgres.store import PostgresStore
    from dunscaith.ports.job_store import JobStore

# Every login node opens the same database, so a job recorded here is reached from any of them.
SHARED_BY_LOGIN_NODES = True
DIALECT = "postgresql"


def settings_model() -> type[StoreSettings]:
    """Its own keys of [records]: records.url, records.password_file, [records.postgresql]."""
    from dunscaith.adapters.store.postgres.settings import PostgresRecords

    return PostgresRecords


def open_store(opening: StoreOpening) -> OpenedStore:
    # imported here: psycopg is loaded only by a command that opens a PostgreSQL store
    from dunscaith.adapters.store.postgres.store import PostgresStore
    from dunscaith.adapters.store.postgres.target import PostgresTarget, SessionTimings

    records = opening.records()
    password_file = records.password_file.expanduser() if records.password_file is not None else None
    timings = SessionTimings(**records.postgresql.model_dump())  # the lock's timings (docs/record-backing.md)
    return PostgresStore.open(PostgresTarget.from_settings(records.url or "", password_file, timings))


def store_exists(opening: StoreOpening) -> bool:
    return True  # a server's store is always there


def write_check(store: JobStore) -> str | None:
    return None  # one job's damage is that job's only: nothing to check of the whole before a write


def doctor_check(store: JobStore) -> str | None:
    """PostgreSQL's whole-store check, for doctor."""
    return cast("PostgresStore", store).integrity_problem()


def migration_metadata() -> list[Any]:
    from dunscaith.adapters.store.sql.tables import metadata, postgres_only

    return [metadata, postgres_only]
