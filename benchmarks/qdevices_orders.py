"""Orders per second through a zero-latency fake site, and fsyncs per order.

Run: .venv/bin/python benchmarks/qdevices_orders.py [ORDERS]

The live call makes each line durable before the next request, so its speed is the disk's: the
baseline, measured in the same run on the same folder, is a loop that appends and fsyncs the same
number of lines with nothing else. The ratio says what the rest of the call (the fold, the rules,
the budget, the encoding) costs on top of the syncs it cannot avoid.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.clock.fake import FakeClock
from adapters.run_records.jsonl import JsonlRecordStore
from adapters.site_lock.flock import FlockSiteLock
from adapters.sites.fake import FakeSite
from domain.model.qdevices.manifest import parse_manifest
from domain.services.qdevices.send import SendRequest, SendRun

SYNCS = {"n": 0}
_real_fsync = os.fsync


def counting_fsync(fd: int) -> None:
    SYNCS["n"] += 1
    _real_fsync(fd)


class Quiet:
    def say(self, text: str) -> None:
        pass


class NoSignals:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def pending(self) -> str | None:
        return None

    def wait(self, seconds: float) -> str | None:
        self.clock.sleep(seconds)
        return None


class NoRules:
    def before_order(self, order: dict) -> str | None:  # type: ignore[type-arg]
        return None

    def after_result(self, order: dict) -> str | None:  # type: ignore[type-arg]
        return None

    def on_refusal(self, order: dict) -> bool:  # type: ignore[type-arg]
        return False


def live_run(folder: Path, orders: int) -> tuple[float, int, int]:
    manifest = parse_manifest({"site": "mqss", "device": "Q5", "name": "bench",
                               "limits": {"job_seconds_limit": 1, "budget_seconds": 10 * orders + 10},
                               "orders": [{"name": f"o{i}", "circuit": "c", "shots": 1}
                                          for i in range(1, orders + 1)]}, "bench")
    clock = FakeClock()
    records = JsonlRecordStore(folder / "records", "bench-host")
    service = SendRun(records, FlockSiteLock(folder / "state", "bench-host"), clock, Quiet(), NoSignals(clock),
                      NoRules(), poll_seconds=0.0)
    req = SendRequest(manifest, "/bench.toml", {o.index: "OPENQASM 2.0;" for o in manifest.orders},
                      host="bench-host", pid=os.getpid())
    site = FakeSite(polls_to_finish=1, seconds=0.5)
    SYNCS["n"] = 0
    start = time.perf_counter()
    outcome = service.live(req, site)
    elapsed = time.perf_counter() - start
    assert outcome.exit == 0, outcome
    assert outcome.record is not None
    lines = len(Path(outcome.record).read_bytes().splitlines())
    return elapsed, SYNCS["n"], lines


def baseline(folder: Path, lines: int) -> float:
    line = b'{"at":"2026-01-01T00:00:00+00:00","job":"fake-1-1","order":1,"type":"submitted"}\n'
    fd = os.open(folder / "baseline.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    start = time.perf_counter()
    for _ in range(lines):
        os.write(fd, line)
        _real_fsync(fd)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return elapsed


def main() -> None:
    orders = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    os.fsync = counting_fsync  # the benchmark counts the syncs the adapters make; tests never do this
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        folder = Path(tmp)
        elapsed, syncs, lines = live_run(folder, orders)
        base = baseline(folder, lines)
    print(f"orders: {orders}, record lines: {lines}, fsyncs: {syncs}")
    print(f"live call:  {orders / elapsed:10.1f} orders/s  ({elapsed * 1000 / orders:.3f} ms/order)")
    print(f"fsyncs per order: {syncs / orders:.2f}  (lines per order: {(lines - 1) / orders:.2f})")
    print(f"baseline (append + fsync the same {lines} lines, nothing else): {lines / base:10.1f} lines/s")
    print(f"ratio live / baseline time: {elapsed / base:.2f}")


if __name__ == "__main__":
    main()
