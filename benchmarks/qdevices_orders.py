"""Orders per second through each zero-latency fake site, and fsyncs per order.

Run: .venv/bin/python benchmarks/qdevices_orders.py [ORDERS]

Four runs of ORDERS orders each: the in-memory FakeSite (no HTTP at all), then each site's real
adapter against its loopback HTTP fake (tests/fakes: MQSS, VLQ through LEXIS and HEAppE, Piast-Q),
every job finishing at its first reads. VLQ writes more lines per order ("created", "uploaded", one
status line per HEAppE state) and makes an init job per call.

The live call makes each line durable before the next request, so its speed is the disk's: the
baseline, measured in the same run on the same folder, is a loop that appends and fsyncs the same
number of lines with nothing else. The ratio says what the rest of the call (HTTP on loopback, the
fold, the rules, the budget, the encoding) costs on top of the syncs it cannot avoid.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import FileDescriptorLike

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.run_records.jsonl import JsonlRecordStore
from dunscaith.adapters.site_lock.flock import FlockSiteLock
from dunscaith.adapters.sites.fake import FakeSite
from dunscaith.adapters.sites.mqss import MqssSite
from dunscaith.adapters.sites.piastq import PiastqSite
from dunscaith.adapters.sites.vlq import VlqSite
from dunscaith.domain.model.qdevices.manifest import parse_manifest
from dunscaith.domain.services.qdevices.send import SendRequest, SendRun
from dunscaith.ports.site import Site
from tests.fakes.mqss_server import FakeMqss
from tests.fakes.piastq_server import DEVICE, FakePiastq
from tests.fakes.vlq_server import PROJECT, FakeVlq

TOKEN = "bench-token-0123456789abcdef"

SYNCS = {"n": 0}
_real_fsync = os.fsync


def counting_fsync(fd: FileDescriptorLike) -> None:
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

    def wake(self) -> None:
        pass

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


def live_run(folder: Path, orders: int, site_name: str, site: Site) -> tuple[float, int, int]:
    extra = {"project": PROJECT} if site_name == "vlq" else {}
    device = {"mqss": "Q5", "vlq": "VLQ", "piastq": DEVICE}[site_name]
    manifest = parse_manifest({"site": site_name, "device": device, "name": "bench", **extra,
                               "limits": {"job_seconds_limit": 10, "budget_seconds": 20 * orders + 20},
                               "orders": [{"name": f"o{i}", "circuit": "c", "shots": 1}
                                          for i in range(1, orders + 1)]}, "bench")
    clock = FakeClock()
    folder = Path(tempfile.mkdtemp(dir=folder))  # each run its own records and site lock
    records = JsonlRecordStore(folder / "records", "bench-host")
    service = SendRun(records, FlockSiteLock(folder / "state", "bench-host"), clock, Quiet(),
                      NoSignals(clock), NoRules(), poll_seconds=0.0, site=site)
    req = SendRequest(manifest, "/bench.toml", {o.index: "OPENQASM 2.0;" for o in manifest.orders},
                      host="bench-host", pid=os.getpid())
    SYNCS["n"] = 0
    start = time.perf_counter()
    outcome = service.live(req)
    elapsed = time.perf_counter() - start
    site.close()
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


def runs(folder: Path, orders: int) -> list[tuple[str, float, int, int]]:
    out = [("in-memory FakeSite (mqss)", *live_run(folder, orders, "mqss", FakeSite(polls_to_finish=1, seconds=0.5)))]
    with FakeMqss(token=TOKEN, path=("COMPLETED",)) as mqss:
        out.append(("MQSS over loopback", *live_run(folder, orders, "mqss", MqssSite(TOKEN, base_url=mqss.base_url))))
    with FakeVlq(token=TOKEN, path=(16,), init_path=(16,)) as vlq:
        site = VlqSite(TOKEN, PROJECT, userorg_url=vlq.userorg_url + "/", heappe_url=vlq.heappe_url,
                       init_poll_seconds=0.0)
        out.append(("VLQ (LEXIS + HEAppE) over loopback", *live_run(folder, orders, "vlq", site)))
    with FakePiastq(token=TOKEN, path=("completed",)) as piastq:
        site_p = PiastqSite(TOKEN, base_url=piastq.base_url)
        out.append(("Piast-Q over loopback", *live_run(folder, orders, "piastq", site_p)))
    return out


def main() -> None:
    orders = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    os.fsync = counting_fsync  # the benchmark counts the syncs the adapters make; tests never do this
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        folder = Path(tmp)
        results = runs(folder, orders)
        most = max(lines for _, _, _, lines in results)
        base = baseline(folder, most) / most  # seconds per appended, synced line
    print(f"orders per run: {orders}; baseline: append + fsync one line, nothing else: {1 / base:.1f} lines/s")
    print(f"{'site':<36} {'orders/s':>9} {'ms/order':>9} {'fsyncs/order':>13} {'lines/order':>12} {'x baseline':>11}")
    for name, elapsed, syncs, lines in results:
        print(f"{name:<36} {orders / elapsed:9.1f} {elapsed * 1000 / orders:9.3f} {syncs / orders:13.2f} "
              f"{(lines - 1) / orders:12.2f} {elapsed / (base * lines):11.2f}")


if __name__ == "__main__":
    main()
