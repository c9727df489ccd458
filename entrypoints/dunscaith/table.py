"""``list`` as a table, as ``squeue`` shows jobs: a header, aligned columns, one line per job, cut to the
terminal's width; ``--format`` picks the columns. The words of each cell come from render.py.

Widths: each column is as wide as its header and the widest cell of the first rows (``MEASURED``: a
page, since ``list`` writes as it reads and keeps memory flat); a later, longer cell pushes the rest of
its line on rather than being cut, and the last column is never padded. A line wider than the output is
cut to it with ``…`` (the command, last by default, is what goes first). The output's width is
``COLUMNS`` when set, else the terminal's; piped output (no terminal, no ``COLUMNS``) keeps whole lines,
so ``grep`` and ``awk`` see every cell, as does ``--wide``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from difflib import get_close_matches

from dunscaith.domain.model.shown import escaped
from dunscaith.domain.model.shown import shown as quoted
from dunscaith.domain.services.jobs.listing import PipelineRow, SweepRow
from dunscaith.domain.services.jobs.status import JobView
from dunscaith.entrypoints.dunscaith import render
from dunscaith.entrypoints.dunscaith.sweep_render import dominant

MEASURED = 100  # rows whose cells set the columns' widths
GAP = "  "


@dataclass(frozen=True, slots=True)
class Column:
    key: str  # what --format names
    header: str
    cell: Callable[[JobView, datetime], str]
    help: str


def _state(v: JobView, now: datetime) -> str:
    words = [v.label]
    if v.state.pruned_at is not None:
        words.append("pruned")
    if v.left and v.state.outcome is not None:
        words.append(f"{len(v.left)} outstanding")
    return ", ".join(words)


def _supervisor(v: JobView, now: datetime) -> str:
    if v.health.held:
        return "supervised, loop unhealthy" if v.loop_unhealthy else "supervised"
    if v.sweep_held:
        return "supervised (its sweep's)"
    return "Unattended" if v.unattended else "-"


def age_text(seconds: float) -> str:
    """How long ago, in one unit: ``40s``, ``12m``, ``3h``, ``5d``."""
    whole = max(int(seconds), 0)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if whole >= size:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def _current(v: JobView, what: str) -> str:
    current = v.state.current
    value = getattr(current, what) if current is not None else None
    return str(value) if value else "-"


COLUMNS: dict[str, Column] = {c.key: c for c in (
    Column("name", "NAME", lambda v, now: v.state.name, "the job's name"),
    Column("state", "STATE", _state, "where it is (pruned, work outstanding after its outcome)"),
    Column("cluster", "CLUSTER", lambda v, now: v.state.spec.cluster, "the cluster it runs on"),
    Column("adapter", "ADAPTER", lambda v, now: v.state.spec.adapter, "the cluster's scheduler (local, slurm)"),
    Column("age", "AGE", lambda v, now: age_text((now - v.state.recorded_at).total_seconds()),
           "since it was submitted"),
    Column("submitted", "SUBMITTED", lambda v, now: render.local_time(v.state.recorded_at),
           "when it was submitted (local time)"),
    Column("elapsed", "ELAPSED", lambda v, now: render.elapsed_text(render.elapsed_seconds(v.state, now)),
           "since it started running, to its end"),
    Column("supervisor", "SUPERVISOR", _supervisor, "supervised, or Unattended (work left, no supervisor)"),
    Column("outcome", "OUTCOME", lambda v, now: v.state.outcome.detail if v.state.outcome is not None else "-",
           "how it ended (exit code 3, ...)"),
    Column("attempts", "ATTEMPTS", lambda v, now: str(len(v.state.attempts)), "how many attempts were made"),
    Column("object", "OBJECT", lambda v, now: _current(v, "object_id"), "the current attempt's scheduler id"),
    Column("stdout", "STDOUT", lambda v, now: _current(v, "stdout"), "the current attempt's stdout path"),
    Column("stderr", "STDERR", lambda v, now: _current(v, "stderr"), "the current attempt's stderr path"),
    Column("command", "COMMAND", lambda v, now: render.command_text(v.state.spec), "the command line (or script)"),
)}
def _sweep_supervisor(row: SweepRow, now: datetime) -> str:
    view = row.view
    open_ = sum(1 for s in view.elements if not s.settled)
    if not open_:
        return "-"
    alone = len(view.unattended)
    held = view.sweep_held or any(s.job in view.held for s in view.elements)
    words = (["supervised"] if held else []) + ([f"{alone} Unattended"] if alone else [])
    return ", ".join(words) or "-"


# a sweep's one row (list without --expand): each column's cell from its elements' summaries
SWEEP_CELLS: dict[str, Callable[[SweepRow, datetime], str]] = {
    "name": lambda r, now: r.view.sweep,
    "state": lambda r, now: dominant(r.view),
    "cluster": lambda r, now: ", ".join(r.view.clusters),
    "adapter": lambda r, now: ", ".join(sorted({s.adapter for s in r.view.elements})),
    "age": lambda r, now: age_text((now - r.view.recorded_at).total_seconds()),
    "submitted": lambda r, now: render.local_time(r.view.recorded_at),
    "elapsed": lambda r, now: "-",
    "supervisor": _sweep_supervisor,
    "outcome": lambda r, now: "-",
    "attempts": lambda r, now: str(sum(s.attempts for s in r.view.elements)),
    "object": lambda r, now: "-",
    "stdout": lambda r, now: "-",
    "stderr": lambda r, now: "-",
    "command": lambda r, now: render.command_text(r.first.spec) if r.first is not None else "-",
}


def _pipeline_cell(row: PipelineRow) -> str:
    from dunscaith.entrypoints.dunscaith.render_pipeline import pipeline_cell  # once a pipeline is listed

    return pipeline_cell(row.view)


def _pipeline_supervisor(row: PipelineRow, now: datetime) -> str:
    view = row.view
    if all(m.settled for m in view.members):
        return "-"
    alone = len(view.unattended)
    words = (["supervised"] if view.held else []) + ([f"{alone} Unattended"] if alone else [])
    return ", ".join(words) or "-"


# a pipeline's one row (list without --expand): each column's cell from its jobs' summaries
PIPELINE_CELLS: dict[str, Callable[[PipelineRow, datetime], str]] = {
    "name": lambda r, now: r.view.name,
    "state": lambda r, now: _pipeline_cell(r),
    "cluster": lambda r, now: ", ".join(r.view.clusters),
    "adapter": lambda r, now: ", ".join(sorted({s.adapter for s in r.view.members})),
    "age": lambda r, now: age_text((now - r.view.recorded_at).total_seconds()),
    "submitted": lambda r, now: render.local_time(r.view.recorded_at),
    "elapsed": lambda r, now: "-",
    "supervisor": _pipeline_supervisor,
    "outcome": lambda r, now: r.view.ending.line if r.view.ending is not None else "-",
    "attempts": lambda r, now: str(sum(s.attempts for s in r.view.members)),
    "object": lambda r, now: "-",
    "stdout": lambda r, now: "-",
    "stderr": lambda r, now: "-",
    "command": lambda r, now: render.command_text(r.first.spec) if r.first is not None else "-",
}
DEFAULT = ("name", "state", "cluster", "age", "elapsed", "supervisor", "command")
WIDE = ("name", "state", "cluster", "adapter", "submitted", "age", "elapsed", "supervisor", "outcome", "attempts",
        "object", "stdout", "stderr", "command")


class UnknownColumn(ValueError):
    """A --format that names no column: one line, with the closest column."""


def parse_format(text: str) -> tuple[str, ...]:
    """``name,state,elapsed`` → those columns in that order (case and spaces ignored)."""
    keys = tuple(part.strip().lower() for part in text.split(","))
    known = list(COLUMNS)
    for key in keys:
        if key not in COLUMNS:
            found = get_close_matches(key, known, n=1)
            hint = f" (did you mean {found[0]}?)" if found else ""
            what = f"no column {quoted(key)}" if key else "an empty column name"
            raise UnknownColumn(f"--format {quoted(text)}: {what}{hint}; the columns are {', '.join(known)}")
    return keys


def output_width() -> int | None:
    """``COLUMNS`` when set, else the terminal's width; None (whole lines) when the output is no terminal."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        if not sys.stdout.isatty():
            return None
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's captured output)
        return None


def cut(line: str, width: int | None) -> str:
    if width is None or len(line) <= width:
        return line
    return line[: max(width - 1, 0)] + "…"


class Table:
    """Rows written as they come; the first ``MEASURED`` are held back to set the widths."""

    def __init__(self, keys: Sequence[str], width: int | None, write: Callable[[str], None], *,
                 header: bool = True) -> None:
        self._columns = [COLUMNS[k] for k in keys]
        self._header = header
        self._width = width
        self._write = write
        self._held: list[list[str] | str] = []  # a row's cells, or a line of its own (a damaged record)
        self._widths: list[int] | None = None

    def row(self, view: JobView, now: datetime) -> None:
        self._add([escaped(c.cell(view, now)) for c in self._columns])

    def sweep_row(self, row: SweepRow, now: datetime) -> None:
        """A sweep as one row: its name, ``sweep of N`` and its counts, ... (``SWEEP_CELLS``)."""
        self._add([escaped(SWEEP_CELLS[c.key](row, now)) for c in self._columns])

    def pipeline_row(self, row: PipelineRow, now: datetime) -> None:
        """A pipeline as one row: its name, ``pipeline of N`` and its steps' states, ... (``PIPELINE_CELLS``)."""
        self._add([escaped(PIPELINE_CELLS[c.key](row, now)) for c in self._columns])

    def line(self, text: str) -> None:
        """A line that is no job's row (a record that does not read), kept in its place among the rows."""
        self._add(escaped(text))

    def _add(self, item: list[str] | str) -> None:
        if self._widths is not None:
            self._emit(item)
            return
        self._held.append(item)
        if len(self._held) >= MEASURED:
            self._flush()

    def close(self) -> None:
        """Writes what is held back: the header and the rows. With no row, the header alone (as squeue's):
        an empty listing says what it would show, and that it showed nothing."""
        if self._widths is None:
            self._flush()

    def _flush(self) -> None:
        cells = [item for item in self._held if isinstance(item, list)]
        self._widths = widths([c.header for c in self._columns], cells)
        if self._header:
            self._emit([c.header for c in self._columns])
        for item in self._held:
            self._emit(item)
        self._held = []

    def _emit(self, item: list[str] | str) -> None:
        assert self._widths is not None
        text = item if isinstance(item, str) else aligned(item, self._widths)
        self._write(cut(text, self._width))


def widths(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[int]:
    found = [len(h) for h in header]
    for row in rows:
        found = [max(w, len(cell)) for w, cell in zip(found, row, strict=True)]
    return found


def aligned(cells: Sequence[str], sizes: Sequence[int]) -> str:
    """Each cell padded to its column's width but the last; a longer cell pushes the rest on."""
    padded = [cell.ljust(size) for cell, size in zip(cells[:-1], sizes, strict=False)]
    return GAP.join([*padded, cells[-1]]) if cells else ""


def column_help() -> Iterator[str]:
    for c in COLUMNS.values():
        yield f"{c.key}: {c.help}"
