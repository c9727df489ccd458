"""The one alembic history of the SQL stores: where it lives, and the revisions this build knows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dunscaith.ports.job_store import StoreError

# Every revision this build knows, oldest first; a test checks it against migrations/versions.
KNOWN_REVISIONS: tuple[str, ...] = ("0001", "0002", "0003", "0004", "0005")
HEAD = KNOWN_REVISIONS[-1]
SQL_VERSIONS = "SELECT version_num FROM alembic_version"


class NewerSchema(StoreError):
    def __init__(self, where: object, found: str, setting: str) -> None:
        super().__init__(
            f"record store {where} was written by a newer dunscaith (schema {found}); this dunscaith knows "
            f"schemas up to {HEAD}: use the newer dunscaith, or another {setting}"
        )


def known_revision(rows: Sequence[Sequence[Any]], where: object, setting: str) -> str:
    """The one revision a store's alembic_version rows (``SQL_VERSIONS``) hold, when this build knows it:
    StoreError when they hold none or several, NewerSchema when a newer build wrote the store (``setting``
    names where another store is given)."""
    if len(rows) != 1:
        raise StoreError(f"record store {where} has {len(rows)} schema versions recorded, expected one")
    found = str(rows[0][0])
    if found not in KNOWN_REVISIONS:
        raise NewerSchema(where, found, setting)
    return found


def migrations_dir() -> Path:
    # The alembic environment lives at the top of the source tree (installed editable: the repo).
    return Path(__file__).resolve().parents[3] / "migrations"


def alembic_config(**attributes: Any):  # type: ignore[no-untyped-def]
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    for name, value in attributes.items():
        config.attributes[name] = value
    return config
