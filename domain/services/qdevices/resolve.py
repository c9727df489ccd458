"""resolve: record a decision on one order, offline, in one synced line, under the site lock."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from os.path import commonpath

from dunscaith.domain.model.qdevices.decisions import apply_older, make_decision
from dunscaith.domain.model.qdevices.identity import RecordIdentity
from dunscaith.domain.model.qdevices.lines import LineType, make
from dunscaith.domain.model.qdevices.orders import RecordError, RunView, fold
from dunscaith.domain.model.qdevices.resolve import Decision, Option, ResolveCase, ResolveRefused, decide
from dunscaith.domain.model.qdevices.sites import SiteName
from dunscaith.domain.services.qdevices.errors import CallRefused
from dunscaith.ports.clock import Clock
from dunscaith.ports.run_record import RecordRead, RecordUnreadable, RunRecords
from dunscaith.ports.site_lock import SiteLock


@dataclass(frozen=True, slots=True)
class Resolved:
    site: str
    order: int
    name: str
    decision: Decision
    own_record: bool


def _listed(path: str, entries: Sequence[str]) -> bool:
    return any(path == entry or commonpath([path, entry]) == entry for entry in entries)


class ResolveOrder:
    def __init__(self, records: RunRecords, lock: SiteLock, clock: Clock,
                 older_records: Mapping[str, Sequence[str]]) -> None:
        self.records = records
        self.lock = lock
        self.clock = clock
        self.older = older_records  # site -> older_records entries (absolute)

    def _read(self, path: str) -> tuple[RecordRead, RunView]:
        try:
            read = self.records.read(path)
            return read, fold(read.lines)
        except RecordUnreadable as exc:
            raise CallRefused(f"{path}: {exc}") from None
        except RecordError as exc:
            raise CallRefused(f"{path}: {exc}: settle it with its runner") from None

    def _site_of(self, read: RecordRead, view: RunView) -> tuple[str, bool]:
        if self.records.is_in_records_folder(read.path):
            if not view.first_line_is_ours:
                raise CallRefused(f"{read.path}: its first line was not written by this app")
            mismatch = RecordIdentity(view.host, view.path, view.device, view.inode).mismatch(read.actual)
            if mismatch and view.path != read.path:
                raise CallRefused(f"{read.path} is a copy ({mismatch}): resolve the record at {view.path}")
            return view.site, True
        sites = [s for s, entries in self.older.items() if _listed(read.path, entries)]
        if view.site in sites:
            return view.site, False
        if len(sites) == 1 and view.site not in {s.value for s in SiteName}:
            return sites[0], False
        raise CallRefused(f"{read.path} is a record of another runner that no site reads: list it, or its folder, "
                          f"in older_records of its site ({view.site}); else the decision has no effect")

    def __call__(self, path: str, order_text: str, option: Option, job: str | None) -> Resolved:
        read, view = self._read(path)
        site, own = self._site_of(read, view)
        with self.lock.hold(site):
            read, view = self._read(read.path)  # again, under the lock: decide on what is there now
            if not own:
                view = apply_older(view, read.path, self.records.older_decisions(site))
            try:
                order = view.by_name_or_number(order_text)
                case = ResolveCase(order, SiteName(site), own, self.clock.now(), view.job_seconds_limit)
                decision = decide(case, option, job)
            except (RecordError, ResolveRefused) as exc:
                raise CallRefused(str(exc)) from None
            if own:
                appender = self.records.open_append(read.path)
                try:
                    appender.append(make(LineType.RESOLVE, self.clock.now(), order=order.index,
                                         option=decision.option.value, job=decision.job,
                                         counts_at_limit=decision.counts_at_limit, final=decision.final))
                finally:
                    appender.close()
            else:
                self.records.add_older_decision(site, make_decision(read.path, order, decision, self.clock.now()))
            return Resolved(site, order.index, order.name, decision, own)
