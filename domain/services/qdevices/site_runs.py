"""Every record of a site where it is, folded, with the decisions on records of other runners."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dunscaith.domain.model.qdevices.decisions import apply_older
from dunscaith.domain.model.qdevices.orders import RecordError, RunView, fold
from dunscaith.domain.services.qdevices.errors import CallRefused
from dunscaith.ports.run_record import RecordUnreadable, RunRecords


@dataclass(frozen=True, slots=True)
class SiteRun:
    path: str
    view: RunView
    own: bool = True  # False: a record of another runner, read through older_records


def load_site_runs(records: RunRecords, site: str, older: Sequence[str], skip: str | None = None) -> list[SiteRun]:
    """Read and fold each record of ``site``; any record that cannot be read refuses the call.

    The budget bound and the open-order check must see every record, so an unreadable one is not
    passed over: it is named, and the user settles it.
    """
    try:  # the records folder itself (a file in its place, a folder open to others) refuses the call too
        decisions = records.older_decisions(site)
        paths = records.site_records(site, older)
    except RecordUnreadable as exc:
        raise CallRefused(str(exc)) from None
    runs: list[SiteRun] = []
    for path in paths:
        if path == skip:
            continue
        try:
            read = records.read(path)
            view = fold(read.lines)
        except (RecordUnreadable, RecordError) as exc:
            raise CallRefused(f"{path}: {exc} (the budget and open-order check read every record of {site})") from None
        own = records.is_in_records_folder(path)
        if not own:
            view = apply_older(view, path, decisions)
        runs.append(SiteRun(path, view, own and view.first_line_is_ours))
    return runs
