"""How often a supervisor asks about its job: at once after a change, often while it is young, rarely
once it has settled in.

After each change (a submit, a release, a new state) the polls start short and double
(``first`` = 0.25 s, 0.5, 1, 2 ... while below ``base``): a short job's end is seen within a fraction of
its length, and a quiet job costs a handful of extra queries per change.

Intervals are the base interval doubled a whole number of times (5, 10, 20, 40, 80, 160 s by default),
and polls fall on multiples of the interval counted from the epoch. So every supervisor on a host
wakes on the same ticks, a longer interval's ticks are a subset of a shorter one's, and one shared
query per tick (the shared query, adapters/scheduler/shared_query.py) answers all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class PollBackoff:
    base: timedelta = timedelta(seconds=5)  # the interval of a young job
    cap: timedelta = timedelta(seconds=160)  # never longer than this (rounded down to base × 2^k)
    # The interval stays at most this fraction of the job's age: a job's end is seen at most a quarter of
    # its age late (a 10-minute-old job is polled every 80 s), and a job's first hour costs 47 queries.
    fraction: float = 0.25
    first: timedelta = timedelta(seconds=0.25)  # the first poll after a change; doubled until ``base``

    def __post_init__(self) -> None:
        if self.base <= timedelta(0) or self.cap < self.base or not 0 < self.fraction <= 1:
            raise ValueError("poll backoff needs 0 < base <= cap and 0 < fraction <= 1")
        if self.first <= timedelta(0):
            raise ValueError("poll backoff needs a positive first interval")


def poll_interval(age: timedelta, backoff: PollBackoff = PollBackoff()) -> timedelta:
    """The interval for a job of this ``age`` (time since it last changed state, or since submit).

    The largest base × 2^k that is at most ``fraction × age`` and at most ``cap``; ``base`` when the
    job is young. Monotone in age, and always a power-of-two multiple of ``base``.
    """
    allowed = min(max(age, timedelta(0)) * backoff.fraction, backoff.cap)
    interval = backoff.base
    while interval * 2 <= allowed:
        interval *= 2
    return interval


def poll_interval_until(age: timedelta, backoff: PollBackoff = PollBackoff()) -> tuple[timedelta, timedelta | None]:
    """``poll_interval(age)``, and the age from which a longer interval applies (None: never, it is the
    longest), so that a caller timing many polls of one job need not work it out again until then."""
    interval = poll_interval(age, backoff)
    longer = interval * 2
    if longer > backoff.cap:
        return interval, None
    # ``age * fraction`` is rounded to the microsecond: from a microsecond short of it on, it may round up
    # to ``longer``. So the age given is at most the first that may have a longer interval, never after it.
    return interval, (longer - timedelta(microseconds=1)) / backoff.fraction


def poll_delay(quiet_polls: int, age: timedelta, backoff: PollBackoff = PollBackoff()) -> timedelta:
    """The interval before the next poll, ``quiet_polls`` answered polls after the last change.

    ``first × 2^quiet_polls`` while that is shorter than ``base`` (0.25, 0.5, 1, 2, 4, 8 s before a
    10 s base), then ``poll_interval(age)``. Every value is ``first × 2^k`` or ``base × 2^k``, so polls
    still fall on shared ticks since the epoch.
    """
    short: timedelta = backoff.first * (1 << min(max(quiet_polls, 0), 40))
    if short < backoff.base:
        return short
    return poll_interval(age, backoff)


@lru_cache(maxsize=16)
def next_poll(now: datetime, interval: timedelta) -> datetime:
    """The first multiple of ``interval`` since the epoch strictly after ``now`` (timezone-aware).

    Kept for the last few (``now``, ``interval``): a sweep's loop times every element of a round from the
    same moment, most of them with the same interval."""
    step = interval // timedelta(microseconds=1)
    if step <= 0:
        raise ValueError("the interval must be positive")
    elapsed = (now - _EPOCH) // timedelta(microseconds=1)
    return _EPOCH + timedelta(microseconds=(elapsed // step + 1) * step)
