"""A live-call test bench: the real JSONL store and site lock on tmp files, a FakeSite, a FakeClock."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.run_records.jsonl import JsonlRecordStore
from dunscaith.adapters.site_lock.flock import FlockSiteLock
from dunscaith.adapters.sites.fake import FakeSite
from dunscaith.domain.model.qdevices.manifest import Manifest, parse_manifest
from dunscaith.domain.model.qdevices.orders import RunView, fold
from dunscaith.domain.model.qdevices.sites import SiteName
from dunscaith.domain.services.qdevices.send import SendOutcome, SendRequest, SendRun
from dunscaith.ports.site import Site

QASM = "OPENQASM 2.0;\nqreg q[1];\n"


class Said:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def say(self, text: str) -> None:
        self.lines.append(text)


class FakeInterrupts:
    """Delivers ``signal`` at the ``after``-th wait; waiting moves the fake clock."""

    def __init__(self, clock: FakeClock, signal: str | None = None, after: int = 1) -> None:
        self.clock = clock
        self.signal = signal
        self.after = after
        self.waits = 0
        self.got: str | None = None

    def pending(self) -> str | None:
        return self.got

    def wake(self) -> None:
        pass

    def wait(self, seconds: float) -> str | None:
        self.waits += 1
        if self.signal and self.waits >= self.after:
            self.got = self.signal
            return self.got
        self.clock.sleep(seconds)
        return None


@dataclass
class Rules:
    go_on_after_refusal: bool = False
    stop_before: str | None = None
    seen: list[dict[str, Any]] = field(default_factory=list)

    def before_order(self, order: dict[str, Any]) -> str | None:
        self.seen.append(order)
        return self.stop_before

    def after_result(self, order: dict[str, Any]) -> str | None:
        return None

    def on_refusal(self, order: dict[str, Any]) -> bool:
        return self.go_on_after_refusal


def manifest(site: str = "mqss", orders: int = 2, limit: int = 60, budget: int = 10_000, wait: int = 30) -> Manifest:
    extra = {"project": "P-QTEST"} if site == "vlq" else {}
    return parse_manifest({"site": site, "device": "Q5", "name": "run", **extra,
                           "limits": {"job_seconds_limit": limit, "budget_seconds": budget, "wait_seconds": wait},
                           "orders": [{"name": f"o{i}", "circuit": "c.qasm", "shots": 10}
                                      for i in range(1, orders + 1)]}, "run")


class Bench:
    def __init__(self, tmp: Path, site: SiteName = SiteName.MQSS, host: str = "h1", **fake: Any) -> None:
        self.tmp = tmp
        self.host = host
        self.clock = FakeClock()
        self.records = JsonlRecordStore(tmp / "records", host)
        self.lock = FlockSiteLock(tmp / "state", host)
        self.site = FakeSite(site, **fake)
        self.said = Said()
        self.rules = Rules()
        self.interrupts = FakeInterrupts(self.clock)

    def service(self, site: Site | None = None) -> SendRun:
        return SendRun(self.records, self.lock, self.clock, self.said, self.interrupts, self.rules, poll_seconds=5,
                       site=site if site is not None else self.site)

    def send(self, m: Manifest, resume: str | None = None, max_order: int | None = None,
             older: tuple[str, ...] = ()) -> SendOutcome:
        req = SendRequest(m, "/m.toml", {o.index: QASM for o in m.orders}, resume, max_order, older, self.host, 42)
        return self.service().live(req)

    def view(self, path: str | None) -> RunView:
        assert path is not None
        return fold(self.records.read(path).lines)

    def creates(self) -> int:
        return sum(1 for method, _ in self.site.journal if method == "create")
