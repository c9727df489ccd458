"""How long folding a job's record takes as it grows: observed events, and request/answer pairs.

Run: .venv/bin/python benchmarks/fold.py [--repeat 5]

Records are built in memory as a store hands them back (kind + data per line, one read-only mapping
for the lines of one text, adapters/store/event_codec.py) and folded with
``domain.model.jobs.state.fold`` (decoding included), the median of --repeat folds each, in CPU
seconds of this process (the wall time of the large fold is printed beside it):
  observed: a 10-event record (submit, release, three observations, outcome, settled) vs the same
            job with 100,000 observations;
  requests: 1,000 vs 10,000 request/answer pairs (hold, refused) on one job.
Linear means the cost per event stays the same as the record grows: the ratios printed are the cost
per event of the large record over that of the small one (goal ~1; the fold was quadratic in requests).
Goal: the record of 100,000 observations folds in well under a second. Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

from dunscaith.adapters.store.event_codec import ReadDecoder, encode_data
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import EventLine, JobRecord, StoreIdentity
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import fold

T0 = datetime(2026, 12, 1, tzinfo=UTC)
OID = ObjectId("4242")


def _record(events: list[ev.Event]) -> JobRecord:
    lines = []
    fields = ReadDecoder().data  # one read's mapping per distinct text, as every store hands them
    for seq, event in enumerate(events, start=1):
        kind, data = ev.encode(event)
        lines.append(EventLine(seq, T0 + timedelta(seconds=seq), kind, fields(encode_data(data))))
    return JobRecord(JobId("bench"), tuple(lines))


def _head() -> list[ev.Event]:
    spec = JobSpec(JobId("bench"), "local", "local", ("true",), None, None, 3)
    return [ev.JobRecorded.of(spec, StoreIdentity("memory", "bench")), ev.Submitting(1, Nonce("n1")),
            ev.Created(1, OID), ev.Confirmed(1, OID), ev.Released(1, OID)]


def _observed(n: int) -> JobRecord:
    states = ["pending", "running"]
    middle: list[ev.Event] = [ev.Observed(1, OID, states[i % 2], None, None, "") for i in range(n)]
    return _record([*_head(), *middle, ev.Observed(1, OID, "completed", 0, None, ""),
                    ev.OutcomeReached("succeeded", ""), ev.Settled()])


def _requests(pairs: int) -> JobRecord:
    middle: list[ev.Event] = []
    for i in range(pairs):
        middle += [ev.Requested(f"r{i}", "hold"), ev.Answered(f"r{i}", "refused", "not now")]
    return _record([*_head(), *middle])


def _median_seconds(record: JobRecord, repeat: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds), medians: on a shared machine the wall time also counts the waits for a
    core, which grow with the length of the run, so the ratios are taken on the CPU time."""
    cpu, wall = [], []
    for _ in range(repeat):
        start_cpu, start = time.process_time(), time.perf_counter()
        fold(record)
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    cases = {"observed": (_observed(2), _observed(100_000)), "requests": (_requests(1_000), _requests(10_000))}
    for name, (small, large) in cases.items():
        small_s, _ = _median_seconds(small, args.repeat * 20)
        large_s, large_wall = _median_seconds(large, args.repeat)
        small_per, large_per = small_s / len(small.events), large_s / len(large.events)
        print(f"{name}: {len(small.events):>7,} events {small_s * 1000:9.2f} ms CPU ({small_per * 1e6:6.2f} us/event)"
              f"   {len(large.events):>7,} events {large_s * 1000:9.2f} ms CPU ({large_per * 1e6:6.2f} us/event,"
              f" wall {large_wall * 1000:.0f} ms)   per-event ratio {large_per / small_per:5.2f}")
    print("goal: the record of 100,000 observations well under 1 s; per-event ratios ~1 (linear)")


if __name__ == "__main__":
    main()
