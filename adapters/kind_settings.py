"""What every kind's own settings model is made of (docs/architecture.md "Add a scheduler", "Add a store
backend"): the value types of a setting, and the keys every ``[clusters.NAME]`` table holds.

A kind's package owns its pydantic model (``adapters/scheduler/slurm/settings.py``; a store kind's
``[records]`` keys: ``adapters/store/postgres/settings.py``) and builds it from these, so its values are
checked as every other setting's are; the settings' strictness (each source
alone, the nearest name of a misspelt key) is ``entrypoints/settings_support.py``'s.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
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


def _parsed(value: Any, parse: Callable[[str, str], object], key: str, example: str) -> str:
    """``value`` when ``parse`` reads it as the setting ``key`` would be read (a ValueError saying why not)."""
    from dunscaith.domain.model.jobs.errors import BadSpec

    if not isinstance(value, str):
        raise ValueError(example)
    try:
        parse(value, key)
    except BadSpec as exc:
        raise ValueError(str(exc).removeprefix(f"{key} ")) from None
    return value


def _size(value: Any) -> str:
    from dunscaith.domain.model.jobs.resources import parse_memory

    return _parsed(value, parse_memory, "max_memory", 'a size as a string ("64G")')


def _time_limit(value: Any) -> str:
    from dunscaith.domain.model.jobs.resources import parse_time_limit

    return _parsed(value, parse_time_limit, "max_time", 'a time limit as a string ("2-00:00:00")')


Factor = Annotated[float, BeforeValidator(_not_bool), Field(gt=1.0, le=100.0)]
Size = Annotated[str, BeforeValidator(_size)]
TimeLimit = Annotated[str, BeforeValidator(_time_limit)]


class OnOutOfMemory(StrictSection):
    """``recovery.on_out_of_memory``: an attempt that ended out of memory is run again with more
    (docs/supervisor.md "Recovery policy")."""

    memory_factor: Factor = Field(default=2.0, description="the memory of the next attempt: times this (above 1)")
    max_memory: Size = Field(description="never more memory than this (64G)")
    attempts: Count = Field(default=2, ge=1, le=100, description="at most this many attempts grown so")


class OnTimeLimit(StrictSection):
    """``recovery.on_time_limit``: an attempt that reached its time limit is run again with a longer one."""

    time_factor: Factor = Field(default=1.5, description="the time limit of the next attempt: times this (above 1)")
    max_time: TimeLimit = Field(description="never a longer time limit than this (2-00:00:00)")
    attempts: Count = Field(default=2, ge=1, le=100, description="at most this many attempts grown so")


class RecoveryRules(StrictSection):
    """The opt-in recovery of the known causes, as ``[recovery]`` and a cluster's ``recovery`` table hold it;
    a key a cluster's table gives replaces ``[recovery]``'s for its jobs."""

    on_out_of_memory: OnOutOfMemory | None = Field(
        default=None, description="grow the memory after an end out of memory (off unless set)"
    )
    on_time_limit: OnTimeLimit | None = Field(
        default=None, description="grow the time limit after an end at it (off unless set)"
    )
    requeue_on_time_limit: Count | None = Field(
        default=None,
        ge=0,
        le=1000,
        description=(
            "with submit --signal-before: an attempt that reached its time limit after its signal is run again with "
            "the same needs, up to this many times (a checkpoint requeue); 0: never"
        ),
    )


class ClusterSettings(StrictSection):
    """What every ``[clusters.NAME]`` table holds whatever its kind; each kind's own model extends it
    (with ``adapter: Literal["<its name>"]``), and a table is validated by the model its ``adapter`` names."""

    adapter: str
    recovery: RecoveryRules = Field(
        default_factory=RecoveryRules,
        description="this cluster's recovery of the known causes, key by key over [recovery]'s",
    )
    bin_dir: UserPath | None = Field(default=None, description="directory of the scheduler's commands")
    env: dict[str, str] = Field(default_factory=dict, description="environment for the scheduler's commands")


class StoreSettings(StrictSection):
    """What a store kind's own keys of the ``[records]`` table are composed with: ``records.backend``, the
    kind the table names. A kind's model (``adapters/store/postgres/settings.py``) extends it with its keys
    and the rules between them; the table is one model made of every registered kind's (a key of one kind
    is accepted whatever the backend, as it always was) beside ``backend`` and ``root``."""

    backend: str
