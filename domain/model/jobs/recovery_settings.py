"""What a job's recovery settings are (recorded in its spec at submit): the growth of a need after an end on
its cause, checkpoint requeues at the time limit, and the signal sent before it. The decisions that use
them are ``recovery.py``'s. Pure values, each checked when made (BadSpec, one line)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.resources import Resources, format_time_limit

MAX_FACTOR = 100.0  # a factor above this is a typo (and overflows a scheduler's limit in two steps)
MAX_RULE_ATTEMPTS = 100
MAX_REQUEUES = 1000  # a training cut into pieces: a thousand pieces is plenty


@dataclass(frozen=True, slots=True)
class Growth:
    """How one need grows after an end on its cause: times ``factor``, at most ``maximum`` (MiB or
    seconds), in at most ``attempts`` new attempts."""

    factor: float
    maximum: int
    attempts: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.factor) and 1.0 < self.factor <= MAX_FACTOR):
            raise BadSpec(f"a growth factor is above 1 and at most {MAX_FACTOR:g} (given {self.factor!r})")
        if not 1 <= self.attempts <= MAX_RULE_ATTEMPTS:
            raise BadSpec(f"a growth's attempts are 1 to {MAX_RULE_ATTEMPTS} (given {self.attempts!r})")
        if self.maximum < 1:
            raise BadSpec("a growth's maximum is at least 1")


@dataclass(frozen=True, slots=True)
class Recovery:
    on_out_of_memory: Growth | None = None
    on_time_limit: Growth | None = None
    requeue_on_time_limit: int = 0  # checkpoint requeues at the time limit (with a signal before it)

    def __post_init__(self) -> None:
        if not 0 <= self.requeue_on_time_limit <= MAX_REQUEUES:
            raise BadSpec(f"requeue_on_time_limit is 0 to {MAX_REQUEUES} (given {self.requeue_on_time_limit!r})")

    def __bool__(self) -> bool:
        return self.on_out_of_memory is not None or self.on_time_limit is not None or self.requeue_on_time_limit > 0


NO_RECOVERY = Recovery()


# ---- the signal before the time limit ------------------------------------------------------------------


class Signal(StrEnum):
    """The signals a job may ask for before its time limit (those a batch shell can trap)."""

    USR1 = "USR1"
    USR2 = "USR2"
    TERM = "TERM"
    INT = "INT"
    HUP = "HUP"
    QUIT = "QUIT"
    ALRM = "ALRM"
    CONT = "CONT"
    URG = "URG"


MAX_SIGNAL_SECONDS = 65535  # Slurm's --signal takes 0 to 65535 seconds


@dataclass(frozen=True, slots=True)
class SignalBefore:
    """``--signal-before SIGNAL@SECONDS``: ``signal`` sent ``seconds`` before the time limit."""

    signal: Signal
    seconds: int

    def __str__(self) -> str:
        return f"{self.signal}@{self.seconds}"


_SIGNAL_BEFORE = re.compile(r"(?:SIG)?([A-Z0-9]{1,8})@([0-9]{1,6})", re.IGNORECASE)


def parse_signal_before(text: str, flag: str = "--signal-before") -> SignalBefore:
    """``USR1@120`` (or ``SIGUSR1@120``): BadSpec, one line, for anything else."""
    match = _SIGNAL_BEFORE.fullmatch(text.strip())
    name = match.group(1).upper() if match else ""
    if not match or name not in Signal.__members__:
        raise BadSpec(
            f"{flag} {text[:40]!r}: SIGNAL@SECONDS, a signal of {', '.join(Signal)} and the seconds "
            f"before the time limit it is sent (USR1@120)"
        )
    seconds = int(match.group(2))
    if not 1 <= seconds <= MAX_SIGNAL_SECONDS:
        raise BadSpec(f"{flag} {text[:40]!r}: the seconds before the time limit are 1 to {MAX_SIGNAL_SECONDS}")
    return SignalBefore(Signal[name], seconds)


def signal_problem(signal_before: SignalBefore | None, resources: Resources) -> str | None:
    """What refuses a job's signal before its time limit, or None: it needs a time limit longer than it."""
    if signal_before is not None:
        if resources.time_limit_s is None:
            return f"--signal-before {signal_before} is sent before the time limit: give --time too"
        if signal_before.seconds >= resources.time_limit_s:
            return (
                f"--signal-before {signal_before}: {signal_before.seconds} s is not before the time limit "
                f"({format_time_limit(resources.time_limit_s)})"
            )
    return None


def recovery_values(recovery: Recovery) -> dict[str, float | int | None]:
    """The recovery settings as plain values (a job's first event, a settings cache): None where not set."""
    oom, time = recovery.on_out_of_memory, recovery.on_time_limit
    return {
        "oom_memory_factor": oom.factor if oom else None,
        "oom_max_memory_mb": oom.maximum if oom else None,
        "oom_attempts": oom.attempts if oom else None,
        "time_factor": time.factor if time else None,
        "time_max_s": time.maximum if time else None,
        "time_attempts": time.attempts if time else None,
        "requeue_on_time_limit": recovery.requeue_on_time_limit or None,
    }


def recovery_from_values(values: Mapping[str, Any]) -> Recovery:
    """``recovery_values``' answer read back (BadSpec, or TypeError/KeyError, when it is none)."""

    def growth(factor: str, maximum: str, attempts: str) -> Growth | None:
        if values[factor] is None or values[maximum] is None or values[attempts] is None:
            return None
        return Growth(float(values[factor]), _whole(values[maximum]), _whole(values[attempts]))

    return Recovery(
        growth("oom_memory_factor", "oom_max_memory_mb", "oom_attempts"),
        growth("time_factor", "time_max_s", "time_attempts"),
        _whole(values["requeue_on_time_limit"] or 0),
    )


def _whole(value: Any) -> int:
    if type(value) is not int:
        raise BadSpec(f"{value!r} is no whole number")
    return value
