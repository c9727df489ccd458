"""Run the qdevices CLI with test adapters put in through the container, never a flag or a variable.

    python driver.py SPEC_JSON qdevices-arguments...

SPEC keys (all optional): ``mqss_base_url``, ``vlq_userorg_url``, ``vlq_heappe_url``, ``piastq_base_url`` (the
fake servers' addresses), ``kill_after_lines`` (SIGKILL
this process right after its Nth durable record line, before the next request), ``fail_after_lines``
(the Nth+1 line fails to write, as a full disk would).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from dependency_injector import containers, providers

from dunscaith.adapters.run_records.jsonl import JsonlAppender, JsonlRecordStore
from dunscaith.entrypoints.qdevices import app as qapp
from dunscaith.ports.run_record import RecordWriteFailed


class CountingStore(JsonlRecordStore):
    def __init__(self, root: Path, host: str, kill_after: int | None, fail_after: int | None) -> None:
        super().__init__(root, host)
        self.kill_after = kill_after
        self.fail_after = fail_after
        self.count = 0

    def _wrap(self, appender: JsonlAppender) -> JsonlAppender:
        original = appender.append
        self.count += 1  # the start line (or, on a resume, nothing yet: open_append wrote no line of ours)
        self._maybe_kill()

        def append(line):  # type: ignore[no-untyped-def]
            if self.fail_after is not None and self.count >= self.fail_after:
                raise RecordWriteFailed(f"{appender.path}: No space left on device")
            original(line)
            self.count += 1
            self._maybe_kill()

        appender.append = append  # type: ignore[method-assign]
        return appender

    def _maybe_kill(self) -> None:
        if self.kill_after is not None and self.count >= self.kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    def create(self, site, run, first):  # type: ignore[no-untyped-def]
        return self._wrap(super().create(site, run, first))

    def open_append(self, path):  # type: ignore[no-untyped-def]
        self.count -= 1  # a resume: count only the lines it appends
        return self._wrap(super().open_append(path))


def main() -> None:
    spec = json.loads(sys.argv[1])
    container = qapp.make_container()
    swapped = containers.DynamicContainer()  # the test's adapters, swapped in as one set
    for address in ("mqss_base_url", "vlq_userorg_url", "vlq_heappe_url", "piastq_base_url"):
        if address in spec:
            setattr(swapped, address, providers.Object(spec[address]))
    if "kill_after_lines" in spec or "fail_after_lines" in spec:
        swapped.records = providers.Singleton(
            CountingStore, root=container.config.records, host=container.adapters.host,
            kill_after=spec.get("kill_after_lines"), fail_after=spec.get("fail_after_lines"))
    container.adapters.override(swapped)
    qapp.main(sys.argv[2:], container=container)


if __name__ == "__main__":
    main()
