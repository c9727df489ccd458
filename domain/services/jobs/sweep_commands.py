"""``cancel / hold / release / give-up / resubmit ...`` on a sweep, or on some of its elements, or on every
job of a pipeline's steps (a step that waits, never created, is answered under its lock as any job: a
cancel settles it cancelled with nothing created).

Each element gets the very request a job would (``JobCommands``), appended to its own record: an
element whose lock a live supervisor holds is asked through its record, and all of those are asked
first, then their answers collected together (one sweep supervisor answers them in a loop or two); an
element with no supervisor is answered by this command under the element's lock, as for one job. A
cancel's stop is not waited for element by element: each one's supervisor (or the next) sees it end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import Action, fold
from dunscaith.domain.model.jobs.sweeps import resubmit_refusal
from dunscaith.domain.services.jobs.commands import Answer, Answerer, CommandResult, JobCommands
from dunscaith.domain.services.jobs.pipeline_status import pipeline_members
from dunscaith.domain.services.jobs.sweep_members import Chosen, SweepMembers
from dunscaith.ports.clock import Clock
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import JobStore

_POLL = 0.25  # seconds between looks at the posted requests' records


@dataclass(frozen=True, slots=True)
class Skipped:
    """An element the command leaves alone, and why (``resubmit --failed``: exp-12 succeeded)."""

    job: JobId
    state: str
    why: str


@dataclass(frozen=True, slots=True)
class SweepAnswer:
    chosen: Chosen
    action: Action
    results: tuple[CommandResult, ...]  # one per element asked, by index
    skipped: tuple[Skipped, ...] = ()


class SweepCommands:
    def __init__(self, store: JobStore, clock: Clock, commands: Callable[[JobId], JobCommands],
                 wait: float = 60.0) -> None:
        self._store = store
        self._clock = clock
        self._commands = commands  # the job commands acting on one element (its supervisor under its lock)
        self._wait = wait
        self._members = SweepMembers(store, pipeline_members(store))

    def choose(self, word: str, state: str | None = None, *, failed: bool = False) -> Chosen:
        """What the user's words name (sweep_members.py); ``failed``: every element of the sweep, for
        ``__call__`` to take the failed ones from (``resubmit NAME --failed``). UnknownJob, or NotASweep
        for a state or --failed given to a job of its own."""
        return self._members.whole(word, "--failed") if failed else self._members.resolve(word, state)

    def __call__(self, chosen: Chosen, action: Action, cancel: Interrupts, *, failed: bool = False) -> SweepAnswer:
        """The request made of every chosen element; ``failed`` (resubmit): only those the rule lets run again
        (``sweeps.resubmit_refusal``), the others skipped with why."""
        skipped: list[Skipped] = []
        jobs = chosen.jobs
        if failed:
            take = []
            for s in chosen.elements:
                if chosen.pipeline is not None and s.attempts == 0 and s.outcome is None:
                    continue  # a step that waits (or is blocked): nothing to run again; it waits again

                why = resubmit_refusal(s.state, s.outcome, s.settled)
                if why is None:
                    take.append(s.job)
                else:
                    skipped.append(Skipped(s.job, s.state, why))
            jobs = take
        return SweepAnswer(chosen, action, tuple(self.ask(jobs, action, cancel)), tuple(skipped))

    def ask(self, jobs: list[JobId], action: Action, cancel: Interrupts) -> list[CommandResult]:
        """``action`` asked of each job: those a live supervisor holds through their records, all posted
        first; the others answered here under their locks. Each one's result, in the order given.

        Each round while answers are awaited asks the store two questions whatever the number of
        elements (each unanswered record's last seq, and each one's lock), and reads only the records
        that grew since they were last read: a record that did not grow says what it said."""
        with self._store.locking():  # the locks taken here one after the other share what they need
            return self._ask(jobs, action, cancel)

    def _ask(self, jobs: list[JobId], action: Action, cancel: Interrupts) -> list[CommandResult]:
        commands = {job: self._commands(job) for job in jobs}
        done: dict[JobId, CommandResult] = {}
        posted = self._post_or_answer(jobs, action, cancel, commands, done)
        deadline = self._clock.monotonic() + self._wait
        read_at: dict[JobId, int] = {}  # each posted record's last seq when it was last read
        while posted:
            self._take_answers(posted, read_at, action, commands, done)
            if posted:
                self._answer_unheld(posted, action, cancel, commands, done)
            if not posted:
                break
            if self._clock.monotonic() >= deadline or cancel.pending() is not None:
                for job, rid in posted.items():
                    done[job] = self._late(job, action, rid)
                break
            cancel.wait(_POLL)
        return [done[job] for job in jobs]

    def _post_or_answer(self, jobs: list[JobId], action: Action, cancel: Interrupts,
                        commands: dict[JobId, JobCommands], done: dict[JobId, CommandResult]) -> dict[JobId, str]:
        """Each job's request posted to its live supervisor, or answered here under its lock when none holds
        it (into ``done``); the posted requests' ids by job."""
        healths = self._store.healths(jobs) if jobs else {}
        posted: dict[JobId, str] = {}
        for job in jobs:
            if cancel.pending() is not None:
                done[job] = CommandResult(job, action, "", Answer.NOT_ANSWERED,
                                          "not asked: the command was interrupted first", None, None)
                continue
            health = healths.get(job)
            result = None if health is not None and health.held else commands[job].here(job, action, cancel)
            if result is None:  # a live supervisor holds it (or took it meanwhile: the sweep's next element)
                posted[job] = commands[job].post(job, action)
            else:
                done[job] = result  # no supervisor: answered here, under its lock
        return posted

    def _take_answers(self, posted: dict[JobId, str], read_at: dict[JobId, int], action: Action,
                      commands: dict[JobId, JobCommands], done: dict[JobId, CommandResult]) -> None:
        """The answers the posted records grew by since they were last read, moved from ``posted`` to ``done``."""
        grown = self._grown(posted, read_at)
        for job, rid in list(posted.items()):
            if job not in grown:
                continue  # nothing appended since it was last read: still not answered
            result, read_at[job] = commands[job].look_at(job, action, rid)
            if result is not None:
                done[job] = result
                del posted[job]

    def _answer_unheld(self, posted: dict[JobId, str], action: Action, cancel: Interrupts,
                       commands: dict[JobId, JobCommands], done: dict[JobId, CommandResult]) -> None:
        """A posted request whose supervisor went away is answered here, under the job's lock."""
        live = self._store.healths(list(posted))
        for job, rid in list(posted.items()):
            health = live.get(job)
            if health is not None and health.held:
                continue
            result = commands[job].answer_here(job, action, rid, cancel)
            if result is not None:
                done[job] = result
                del posted[job]

    def _grown(self, posted: dict[JobId, str], read_at: dict[JobId, int]) -> set[JobId]:
        """The posted elements whose records grew since they were last read (never read: grown), from
        each one's last seq asked of the store at once."""
        asked = [job for job in posted if job in read_at]
        last = self._store.last_seqs(asked) if asked else {}
        return {job for job in posted if job not in read_at or last.get(job, read_at[job] + 1) > read_at[job]}

    def _late(self, job: JobId, action: Action, rid: str) -> CommandResult:
        """A posted request not answered (or not carried out) within the wait: it stays in the record."""
        state = fold(self._store.read(job))
        found = state.request(rid)
        if found is not None and found.result == Answer.CONFIRMED:
            return CommandResult(job, action, rid, Answer.CONFIRMED, found.detail, Answerer.SUPERVISOR, state,
                                 f"confirmed, but not carried out within {self._wait:g} s; the supervisor carries "
                                 "it on (see `status`)")
        return CommandResult(job, action, rid, Answer.NOT_ANSWERED,
                             f"not answered within {self._wait:g} s; the request stays in the record and is "
                             "answered once, by the supervisor or the next command", None, state)
