"""What every kind's own settings model is made of (docs/architecture.md "Add a scheduler", "Add a store
backend"): the value types of a setting, and the keys every ``[clusters.NAME]`` table holds.

A kind's package owns its pydantic model (``adapters/scheduler/slurm/settings.py``) and builds it from
these, so its values are checked as every other setting's are; the settings' strictness (each source
alone, the nearest name of a misspelt key) is ``entrypoints/settings_support.py``'s, which re-exports
the value types.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from dunscaith.domain.model.user_paths import UserPathRefused, expand_user_path

# Durations and intervals: finite, and no longer than this (a supervisor never waits a month for a step).
MAX_SECONDS = 30 * 24 * 3600.0


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a number, not true/false")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a finite number")
    if isinstance(value, str) and value.strip().lower().lstrip("+-") in ("inf", "infinity", "nan"):
        raise ValueError("a finite number")
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("a finite number")
    if value > MAX_SECONDS:
        raise ValueError(f"at most {MAX_SECONDS:.0f} seconds (30 days)")
    return value


def _bool_not_number(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError("true or false, not a number")
    return value


def user_path(value: Any) -> Path:
    """A path setting through the one path rule: ``~`` and ``$VAR`` expanded, absolute, never empty."""
    if isinstance(value, Path):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError("a path (a string)")
    try:
        return Path(expand_user_path(value, os.environ, os.environ.get("HOME") or str(Path.home())))
    except UserPathRefused as exc:
        raise ValueError(str(exc)) from None


Seconds = Annotated[float, BeforeValidator(_not_bool), AfterValidator(_finite)]
Count = Annotated[int, BeforeValidator(_not_bool)]
Flag = Annotated[bool, BeforeValidator(_bool_not_number)]
UserPath = Annotated[Path, BeforeValidator(user_path)]


class StrictSection(BaseModel):
    """A table of the configuration: no key it does not name, and frozen once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ClusterSettings(StrictSection):
    """What every ``[clusters.NAME]`` table holds whatever its kind; each kind's own model extends it
    (with ``adapter: Literal["<its name>"]``), and a table is validated by the model its ``adapter`` names."""

    adapter: str
    bin_dir: UserPath | None = Field(default=None, description="directory of the scheduler's commands")
    env: dict[str, str] = Field(default_factory=dict, description="environment for the scheduler's commands")
