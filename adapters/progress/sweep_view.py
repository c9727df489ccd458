"""A sweep's live view (a ``SweepSupervisionView``): at a terminal one block kept at the bottom (the sweep, the elapsed
time, a bar of the elements done, the counts by state, the last few changes); elsewhere (a pipe, a file,
nohup, ``NO_COLOR``) one timestamped plain line per change and no escape code at all.

rich is imported only for a terminal. The block is redrawn when a round of the supervisor's loop ends
and at most a few times a second, never by a thread of its own: a sweep supervisor lives for days on a
login node that counts its CPU.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

from dunscaith.adapters.progress.terminal import console_for, describe, elapsed, start_live
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import JobState, label
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.sweep_counts import counts_words

if TYPE_CHECKING:
    from rich.live import Live

_LAST = 5  # changes kept in the block
_BAR = 30  # the bar's width in cells
_STEP_BAR = 20  # a pipeline step's bar
_STEPS = 12  # a pipeline's steps drawn in the block at most
_REDRAW = 0.25  # seconds: the block is redrawn at most this often
_DONE_WORDS = frozenset({"succeeded", "failed", "cancelled", "abandoned", "refused", "escalated", "damaged"})


class _Element:
    """One element's supervisor reports here (a ``JobProgress``)."""

    def __init__(self, view: SweepLiveView, job: JobId) -> None:
        self._view = view
        self._job = job

    def committed(self, state: JobState, event: ev.Event) -> None:
        self._view.change(self._job, label(state), describe(event, state))

    def supervised(self, state: JobState, at: datetime) -> None:
        pass

    def note(self, text: str) -> None:
        self._view.line(f"{self._job}: {text}")


class _Block:
    def __init__(self, view: SweepLiveView) -> None:
        self._view = view

    def __rich__(self) -> Any:
        from rich.console import Group
        from rich.text import Text

        v = self._view
        if not v.words:  # nothing to supervise (supervise --all with no Unattended job): no empty block
            return Group()
        head = Text(no_wrap=True, overflow="ellipsis")
        steps = v.steps()
        if len(steps) > 1:  # a pipeline (or supervise --all): a line per step, a bar for each sweep
            head.append(f"pipeline {v.sweep}", style="bold")
            head.append(f"  {len(steps)} steps  {len(v.words)} jobs  {elapsed(time.monotonic() - v.began)}")
            body = [_step_line(name, words, v.sweep) for name, words in list(steps.items())[:_STEPS]]
            if len(steps) > _STEPS:
                body.append(Text(f"  … and {len(steps) - _STEPS} more steps", style="dim"))
        else:
            head.append(f"sweep {v.sweep}", style="bold")
            head.append(f"  {len(v.words)} elements  {elapsed(time.monotonic() - v.began)}")
            body = [_bar(list(v.words.values()), _BAR)]
        lines = [head, *body, *(Text(f"  {change}", style="dim", no_wrap=True, overflow="ellipsis")
                                for change in v.last)]
        return Group(*lines)


def _bar(words: list[str], width: int) -> Any:
    """A bar of the jobs done, then their counts by state."""
    from rich.text import Text

    done = sum(1 for word in words if word in _DONE_WORDS)
    filled = round(width * done / len(words))
    bar = Text(no_wrap=True, overflow="ellipsis")
    bar.append("█" * filled, style="green")
    bar.append("░" * (width - filled), style="dim")
    bar.append(f" {done}/{len(words)} done  ")
    bar.append(counts_words(words, " · "))
    return bar


def _step_line(name: str, words: list[str], title: str) -> Any:
    """One step of a pipeline: its name (less the pipeline's), then its state, or a bar for a sweep."""
    from rich.text import Text

    shown = name.removeprefix(f"{title}.")
    line = Text(f"  {shown:<16} ", no_wrap=True, overflow="ellipsis")
    if len(words) == 1:
        return line + Text(words[0])
    return line + _bar(words, _STEP_BAR)


class SweepLiveView:
    def __init__(self, sweep: str, stream: IO[str] | None = None) -> None:
        self.sweep = sweep
        self._stream = stream or sys.stdout
        self.words: dict[JobId, str] = {}  # each element's state word, as the last change said
        self.group: dict[JobId, str] = {}  # each element's step: its sweep's name, or its own
        self.last: deque[str] = deque(maxlen=_LAST)
        self.began = time.monotonic()
        self._console = console_for(self._stream)
        self._live: Live | None = None
        self._drawn = 0.0
        self._dirty = False

    def __enter__(self) -> SweepLiveView:
        self._live = start_live(self._console, _Block(self), auto_refresh=False, transient=False)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.refresh()
            self._live.stop()
            self._live = None

    def show(self, elements: Sequence[JobSummary]) -> None:
        self.words = {e.job: e.state for e in elements}
        self.group = {e.job: e.sweep or e.job for e in elements}
        if self._live is None and elements:
            steps = len(self.steps())
            what = f"{len(elements)} jobs in {steps} steps" if steps > 1 else f"{len(elements)} elements"
            self._plain(f"{what}: {counts_words(self.words.values())}")
        self._draw(force=True)

    def held(self, words: Mapping[JobId, str]) -> None:
        self.words.update((job, word) for job, word in words.items() if job in self.words)
        self._dirty = True

    def steps(self) -> dict[str, list[str]]:
        """The jobs' state words by step (a sweep, or a job of its own), in the order first shown."""
        out: dict[str, list[str]] = {}
        for job, word in self.words.items():
            out.setdefault(self.group.get(job, job), []).append(word)
        return out

    def element(self, job: JobId) -> _Element:
        return _Element(self, job)

    def change(self, job: JobId, word: str, text: str) -> None:
        self.words[job] = word
        stamp = datetime.now(UTC).astimezone().strftime("%H:%M:%S")
        self.last.append(f"{stamp} {job}: {text}")
        if self._live is None:
            self._plain(f"{job}: {text}")
        self._dirty = True
        self._draw()

    def ended(self, job: JobId, ending: str, state: JobState | None) -> None:
        if ending not in ("outcome", "drained"):  # a drain is said once, for the whole sweep
            self.line(f"{job}: supervision ended: {ending}")

    def line(self, text: str) -> None:
        if self._live is None:
            self._plain(text)
            return
        try:
            from rich.text import Text

            stamp = datetime.now(UTC).astimezone().strftime("%H:%M:%S")
            self._live.console.print(Text(f"{stamp} ", style="dim") + Text(text), soft_wrap=True)
        except (BrokenPipeError, OSError, ValueError):  # a closed reader: output dropped, supervision goes on
            pass

    def refresh(self) -> None:
        self._draw(force=self._dirty)

    def _draw(self, *, force: bool = False) -> None:
        if self._live is None:
            return
        now = time.monotonic()
        if force or now - self._drawn >= _REDRAW:
            self._drawn = now
            self._dirty = False
            try:
                self._live.refresh()
            except (BrokenPipeError, OSError, ValueError):
                pass

    def _plain(self, text: str) -> None:
        stamp = datetime.now(UTC).astimezone().isoformat(timespec="seconds")
        try:
            print(f"{stamp} {self.sweep}: {text}", file=self._stream, flush=True)
        except (BrokenPipeError, OSError, ValueError):
            pass
