from __future__ import annotations

from datetime import UTC, datetime, timedelta


class FakeClock:
    """A clock tests move by hand; ``sleep`` advances it instead of waiting."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0
        self.slept: list[float] = []

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.advance(seconds=max(0.0, seconds))

    def advance(self, **delta: float) -> None:
        step = timedelta(**delta)
        self._now += step
        self._mono += step.total_seconds()
