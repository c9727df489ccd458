"""The decisions taken on a local object before it runs: a tiny append-only log with compare-and-set.

Each decision is a file ``step.<k>.json`` (k = 1, 2, ...) published by link, which never replaces:
two actors that read the same k steps and both try to write step k+1 cannot both succeed. The loser
reads again and decides anew. That is what makes "release twice never starts twice" and "hold or
cancel before start wins or loses cleanly" exact, across processes and crashes:

    HELD --release--> PENDING --start--> STARTED
     ^                  |  |
     +------hold--------+  +--cancel--> CANCELLED  (cancel of a HELD object too)

``start`` is written by the releaser just before it spawns the process owner; once it is there, no
other decision is ever appended (a started object is cancelled through the process owner).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

from dunscaith.adapters.durable.private_read import read_private
from dunscaith.adapters.durable.publish import publish
from dunscaith.domain.model.strict_json import DecodeError, decode_exact, dumps_canonical

STEP_FORMAT = "dunscaith.local-scheduler.step/1"
MAX_STEP_FILE = 64 * 1024  # a step is one small JSON object
_STEP = re.compile(r"step\.([1-9][0-9]{0,8})\.json")


class Phase(StrEnum):
    HELD = "held"
    PENDING = "pending"
    STARTED = "started"
    CANCELLED = "cancelled"


class Action(StrEnum):
    RELEASE = "release"
    HOLD = "hold"
    START = "start"
    CANCEL = "cancel"


_NEXT: Mapping[Phase, Mapping[Action, Phase]] = {
    Phase.HELD: {Action.RELEASE: Phase.PENDING, Action.CANCEL: Phase.CANCELLED},
    Phase.PENDING: {Action.START: Phase.STARTED, Action.HOLD: Phase.HELD, Action.CANCEL: Phase.CANCELLED},
    Phase.STARTED: {},
    Phase.CANCELLED: {},
}


@dataclass(frozen=True, slots=True)
class Steps:
    actions: tuple[Action, ...]
    phase: Phase

    @property
    def count(self) -> int:
        return len(self.actions)

    def allows(self, action: Action) -> bool:
        return action in _NEXT[self.phase]


def step_name(k: int) -> str:
    return f"step.{k}.json"


def fold(actions: Iterable[Action], what: str) -> Phase:
    phase = Phase.HELD
    for k, action in enumerate(actions, start=1):
        nxt = _NEXT[phase].get(action)
        if nxt is None:
            raise DecodeError(f"{what}: step {k} ({action}) cannot follow {phase}")
        phase = nxt
    return phase


def read_steps(directory: Path, names: Iterable[str]) -> Steps:
    """The log from the directory's file ``names`` (one listing, taken by the caller)."""
    numbers = sorted(int(m.group(1)) for n in names if (m := _STEP.fullmatch(n)))
    if numbers != list(range(1, len(numbers) + 1)):
        raise DecodeError(f"{directory}: steps {numbers} have a gap")
    actions: list[Action] = []
    for k in numbers:
        path = directory / step_name(k)
        obj = decode_exact(_read(path), {"format": (str,), "action": (str,), "at": (str,)}, str(path))
        if obj["format"] != STEP_FORMAT or obj["action"] not in Action.__members__.values():
            raise DecodeError(f"{path}: not a step this scheduler writes")
        actions.append(Action(obj["action"]))
    return Steps(tuple(actions), fold(actions, str(directory)))


def step_at(directory: Path, k: int) -> datetime:
    """When step ``k`` was written (its own ``at``): a cancelled object's end, for ``times``."""
    path = directory / step_name(k)
    obj = decode_exact(_read(path), {"format": (str,), "action": (str,), "at": (str,)}, str(path))
    try:
        return datetime.fromisoformat(obj["at"])
    except ValueError:
        raise DecodeError(f"{path}: at {obj['at']!r} is not a time") from None


def try_append(directory: Path, steps: Steps, action: Action) -> bool:
    """Write step ``count+1``; False when another actor wrote it first (read again and decide)."""
    if not steps.allows(action):
        raise ValueError(f"{action} cannot follow {steps.phase}")
    data = dumps_canonical({"format": STEP_FORMAT, "action": str(action), "at": datetime.now(UTC).isoformat()})
    return publish(directory, step_name(steps.count + 1), data)


def _read(path: Path) -> bytes:
    return read_private(path, MAX_STEP_FILE)
