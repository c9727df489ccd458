"""Pruning: which jobs may be let go of for good, and the ``--older-than`` duration.

Only a settled job is pruned: no live supervisor (its lock is free), the record settled, nothing
outstanding. Its record is kept whole (records are never edited or deleted); pruning adds the job to
the residual list (any not-started object of its name is swept), records ``pruned`` and removes its
pointer, so ``list`` no longer shows it.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.settlement import outstanding
from dunscaith.domain.model.jobs.state import JobState

DEFAULT_OLDER_THAN = timedelta(days=30)
# A century: older than any record, and far inside what a date can be moved by (999999999w is not).
MAX_DURATION_SECONDS = 36500 * 86400

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d{1,9})([smhdw])")


class BadDuration(JobsError, ValueError):
    """A duration that does not read; the message says what one looks like."""


def parse_duration(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w``: a whole number and one unit; BadDuration otherwise."""
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise BadDuration(f"duration {text!r} does not read: give a whole number and one unit of s, m, h, d "
                          "or w (30d, 12h, 90m)")
    seconds = int(found.group(1)) * _UNITS[found.group(2)]
    if seconds > MAX_DURATION_SECONDS:
        raise BadDuration(f"duration {text!r} is longer than 100 years (36500d), the longest one read")
    return timedelta(seconds=seconds)


def last_change(state: JobState) -> datetime:
    """When the job's record last changed: its age for ``--older-than`` is measured from here."""
    return state.updated_at or state.recorded_at


def not_prunable(state: JobState, supervised: bool, *, delivering: bool = False) -> str | None:
    """Why ``state`` cannot be pruned now, or None when it can."""
    if supervised:
        return f"job {state.name} is held by a live supervisor (or another command): it is not settled"
    if not state.settled:
        return (f"job {state.name} is not settled (now {state.outcome.kind if state.outcome else 'no outcome'}): "
                "only a settled job is pruned; cancel or abandon it, or let it finish")
    left = outstanding(state, delivering=delivering)
    if left:
        return f"job {state.name} has work outstanding ({left[0].what}): carry it on with reconcile first"
    return None


def old_enough(state: JobState, now: datetime, older_than: timedelta) -> bool:
    return now - last_change(state) >= older_than
