"""Build record lines for tests, with times that move on by one second a line."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from dunscaith.domain.model.qdevices.lines import APP, FORMAT, Line, LineType, make

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Kit:
    def __init__(self, orders: tuple[str, ...] = ("a", "b"), site: str = "mqss", limit: int = 100) -> None:
        self.at = T0
        self.lines: list[Line] = [make(
            LineType.START, self.at, app=APP, format=FORMAT, site=site, site_device="Q5", run="r", manifest="/m.toml",
            host="h", path="/rec.jsonl", device=1, inode=2, pid=3, orders=list(orders), resume=False,
            job_seconds_limit=limit)]

    def add(self, kind: LineType, *, gap: timedelta = timedelta(seconds=1), **data: Any) -> Kit:
        self.at += gap
        self.lines.append(make(kind, self.at, **data))
        return self

    def submitting(self, order: int = 1) -> Kit:
        return self.add(LineType.SUBMITTING, order=order, name="x")

    def submitted(self, order: int = 1, job: str = "j1") -> Kit:
        return self.add(LineType.SUBMITTED, order=order, job=job)

    def status(self, state: str | None, order: int = 1, job: str = "j1", gap: timedelta = timedelta(seconds=1)) -> Kit:
        return self.add(LineType.STATUS, gap=gap, order=order, job=job, state=state,
                        missed=None if state else "HTTP 503")

    def result(self, order: int = 1, job: str = "j1", seconds: float | None = 5.0, outcome: str = "completed") -> Kit:
        return self.add(LineType.RESULT, order=order, job=job, outcome=outcome, seconds=seconds, counts={"0": 1})

    def stop(self, reason: str, order: int | None = 1, gap: timedelta = timedelta(seconds=1)) -> Kit:
        return self.add(LineType.STOP, gap=gap, reason=reason, order=order, job=None, detail="")
