"""The small use cases: jobs (read a record), unlock (clear a stale holder), check (a live token check)."""

from __future__ import annotations

from dataclasses import dataclass

from dunscaith.domain.model.qdevices.answers import CheckAnswer
from dunscaith.domain.model.qdevices.host_names import host_name_problem
from dunscaith.domain.model.qdevices.orders import RecordError, RunView, fold
from dunscaith.domain.services.qdevices.errors import CallRefused
from dunscaith.ports.run_record import RecordUnreadable, RunRecords
from dunscaith.ports.site import Site
from dunscaith.ports.site_lock import Holder, SiteLock


@dataclass(frozen=True, slots=True)
class RecordListing:
    path: str
    view: RunView
    torn_tail: bool


class ShowJobs:
    def __init__(self, records: RunRecords) -> None:
        self.records = records

    def __call__(self, path: str) -> RecordListing:
        try:
            read = self.records.read(path)
            return RecordListing(read.path, fold(read.lines), read.torn_tail)
        except (RecordUnreadable, RecordError) as exc:
            raise CallRefused(f"{path}: {exc}") from None


class Unlock:
    def __init__(self, lock: SiteLock) -> None:
        self.lock = lock

    def __call__(self, site: str, host: str) -> Holder | None:
        problem = host_name_problem(host)
        if problem is not None:
            raise CallRefused(f"--host: {problem}")
        return self.lock.unlock(site, host)


class CheckSite:
    def __init__(self, lock: SiteLock, site: Site) -> None:
        self.lock = lock
        self.site = site

    def __call__(self, device: str) -> CheckAnswer:
        with self.lock.hold(self.site.name.value):
            return self.site.check(device)
