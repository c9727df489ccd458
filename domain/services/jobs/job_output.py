"""Where a job's output is and what it says: the record's paths (from the release), else what its
scheduler says now; the last lines of a failed job's stderr; the end of its output when a supervision
ends; ``logs --follow``; ``prune --outputs``."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from dunscaith.domain.model.jobs.state import Attempt, JobState, OutcomeKind
from dunscaith.ports.clock import Clock
from dunscaith.ports.job_output import OutputFiles
from dunscaith.ports.scheduler import Scheduler

FAILURE_TAIL_LINES = 10
# The end of a job's output shown when its supervision ends (as srun shows a short job's): bounded, so a
# job that printed gigabytes costs one small read.
OUTPUT_TAIL_LINES = 10
OUTPUT_TAIL_BYTES = 4 * 1024
LOCAL = "local"


@dataclass(frozen=True, slots=True)
class OutputTail:
    """The end of one of a job's output files: its last lines, and whether the file holds more."""

    stream: str  # "stdout", "stderr", or "output" (both in one file)
    path: str
    lines: tuple[str, ...] = ()
    cut: bool = False  # the file holds more than these lines
    problem: str = ""  # why it did not read (then no lines)


class JobOutputs:
    def __init__(self, files: OutputFiles, schedulers: Callable[[str], Scheduler], clock: Clock,
                 state_root: str) -> None:
        self._files = files
        self._schedulers = schedulers  # a cluster's name -> its scheduler (opened once per command)
        self._clock = clock
        self._root = posixpath.abspath(state_root)  # the host's scheduler state: the local scheduler's object folders

    def paths(self, cluster: str, attempt: Attempt) -> tuple[str | None, str | None]:
        """The record's paths (from the release), else what the scheduler says now."""
        if attempt.stdout is not None or attempt.stderr is not None or attempt.object_id is None:
            return attempt.stdout, attempt.stderr
        try:
            paths = self._schedulers(cluster).output_paths(attempt.object_id)
        except Exception:  # display only
            return None, None
        return (paths.stdout, paths.stderr) if paths is not None else (None, None)

    def failure_tail(self, state: JobState, stderr: str | None) -> tuple[str, ...]:
        """The last lines of the stderr of a job whose outcome is not success (the reason, mostly)."""
        if state.outcome is None or state.outcome.kind is OutcomeKind.SUCCEEDED or stderr is None:
            return ()
        return tuple(self._files.last_lines(stderr, FAILURE_TAIL_LINES))

    def ending_tails(self, state: JobState, stdout: str | None, stderr: str | None) -> tuple[OutputTail, ...]:
        """The end of a job's output once it has its outcome: its stdout's, and its stderr's when it has
        any and the job succeeded (a failure's stderr is ``failure_tail``'s)."""
        if state.outcome is None:
            return ()
        tails = []
        if stdout is not None:
            tails.append(self.output_tail("output" if stdout == stderr else "stdout", stdout))
        if stderr is not None and stderr != stdout and state.outcome.kind is OutcomeKind.SUCCEEDED:
            shown = self.output_tail("stderr", stderr)
            if shown.lines or shown.cut:
                tails.append(shown)
        return tuple(tails)

    def output_tail(self, stream: str, path: str) -> OutputTail:
        try:
            data, size = self._files.tail(path, OUTPUT_TAIL_LINES, limit=OUTPUT_TAIL_BYTES)
        except OSError as exc:
            return OutputTail(stream, path, problem=exc.strerror or str(exc))
        return OutputTail(stream, path, tuple(data.decode(errors="replace").splitlines()), len(data) < size)

    def chunks(self, path: str) -> Iterator[bytes]:
        return self._files.chunks(path)

    def tail(self, path: str, count: int) -> tuple[bytes, int]:
        """The last ``count`` lines of ``path`` (``logs --tail``), and where a follower goes on from."""
        return self._files.tail(path, count)

    def follow(self, path: str, sink: Callable[[str], None], ended: Callable[[], bool], start: int = 0) -> None:
        """Copy ``path`` from byte ``start`` on, and what is appended to it, into ``sink`` until ``ended()``
        (asked once a second)."""
        follower = self._files.follower()
        follower.add(path, sink, start)
        try:
            while not ended():
                self._clock.sleep(1.0)
        finally:
            follower.stop()

    def remove_folders(self, states: Iterable[JobState]) -> list[str]:
        """The local scheduler's object folders of these pruned jobs, removed: each one that the record
        names (the folder of its stdout) and that lies in this host's record root. Slurm's output is never
        touched."""
        removed = []
        for state in states:
            if state.spec.adapter != LOCAL or state.pruned_at is None:
                continue
            for attempt in state.attempts:
                if attempt.stdout is None:
                    continue
                folder = posixpath.dirname(posixpath.abspath(attempt.stdout))
                kind_dir = posixpath.dirname(folder)
                if posixpath.dirname(kind_dir) == self._root and self._files.remove_folder(folder, kind_dir):
                    removed.append(folder)
        return removed
