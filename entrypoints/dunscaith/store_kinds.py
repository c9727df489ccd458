"""The job stores ``records.backend`` names, and what each store declares of its records: a host's own, or
shared by every login node, and the files a host's own store leaves once made. The container opens the store
chosen (its ``store`` Selector has these names); routing, before typer, only asks whether the records are
shared, and a command whether there is a store to look in: neither imports a store to know.

Only the stores' package ``__init__`` modules are read here (a constant each): no store, driver or
SQL library is imported.
"""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.store import postgres, sqlite

SHARED_BY_LOGIN_NODES: dict[str, bool] = {
    "sqlite": sqlite.SHARED_BY_LOGIN_NODES,
    "postgresql": postgres.SHARED_BY_LOGIN_NODES,
}


def records_shared(backend: str) -> bool:
    """Whether a store of this kind may hold a job recorded on another host (an unknown kind: it may)."""
    return SHARED_BY_LOGIN_NODES.get(backend, True)

STORE_FILES: dict[str, tuple[str, ...]] = {
    "sqlite": sqlite.STORE_FILES,
    "postgresql": postgres.STORE_FILES,
}


def store_exists(backend: str, root: Path) -> bool:
    """Whether there is a store to look in without making one: a host's own once it was made in
    records.root (none on a login node where nothing was ever recorded; a root whose store file was lost
    still has its HOST, and opening it says the store is lost), one on a server always (an unknown kind:
    it is asked, as before)."""
    files = STORE_FILES.get(backend)
    return not files or any((root / name).exists() for name in files)
