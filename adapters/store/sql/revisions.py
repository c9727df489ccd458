"""The one alembic history of the SQL stores: where it lives, and the revisions this build knows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# Every revision this build knows, oldest first; a test checks it against migrations/versions.
KNOWN_REVISIONS: tuple[str, ...] = ("0001", "0002", "0003", "0004", "0005")
HEAD = KNOWN_REVISIONS[-1]


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
