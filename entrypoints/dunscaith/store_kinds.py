"""The job stores ``records.backend`` names, and what each store declares of its records: a host's own, or
shared by every login node. The container opens the store chosen (its ``store`` Selector has these names);
routing, before typer, only asks whether the records are shared, and must not import a store to know.

Only the stores' package ``__init__`` modules are read here (a constant each): no store, driver or
SQL library is imported.
"""

from __future__ import annotations

from dunscaith.adapters.store import postgres, sqlite

SHARED_BY_LOGIN_NODES: dict[str, bool] = {
    "sqlite": sqlite.SHARED_BY_LOGIN_NODES,
    "postgresql": postgres.SHARED_BY_LOGIN_NODES,
}


def records_shared(backend: str) -> bool:
    """Whether a store of this kind may hold a job recorded on another host (an unknown kind: it may)."""
    return SHARED_BY_LOGIN_NODES.get(backend, True)
