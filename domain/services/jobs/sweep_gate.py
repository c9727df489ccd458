"""The jobs of one supervision (a pipeline's steps, a sweep submitted with ``--after``, ``supervise --all``)
whose first create waits for other jobs: held out of the line of jobs to start until the dependency rule
says they may be created.

A job held here is not taken: no lock, no loop, no --max-running slot, no scheduler query. The rule is asked
again (reading records only, ``Gates.answers``) when something it may read changed: a job of this supervision
reached an outcome or ended its supervision, or, for what another process supervises, at a poll that starts
at ``GATE_POLL`` seconds and doubles each time nothing moved, up to ``GATE_POLL_MAX`` (a 500-element sweep's
summaries read each second cost its pipeline's supervisor 47 s of CPU an hour), or up to ``GATE_POLL_OURS``
while everything they wait for that can still change is supervised by this loop (then a poll asks the store
only whether the held jobs' records grew, and a move of this loop reads only the summaries of the jobs that
moved: ``HeldBack._unchanged``). A job the rule blocks stays
held (a ``resubmit --failed`` of what blocked it, from another terminal, makes it wait again); the supervision
ends when nothing it holds can still start.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from dunscaith.domain.model.jobs.dependencies import BLOCKED, WAITING, Blocked, Ready
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.services.jobs.gates import GateReading, Gates
from dunscaith.ports.job_store import StoreError, UnknownJob

GATE_POLL = 1.0  # seconds to the first reading again of what held jobs wait for, once nothing of this loop moves
GATE_POLL_MAX = 60.0  # ... then twice as long each time nothing moved, up to this: a waiting step costs ~nothing
# ... up to this instead while every job they wait for that has no outcome yet is one this loop supervises and
# none is blocked: its own moves ask the rule at once, so the poll is only for what nobody should do meanwhile
# (a held job cancelled from another terminal). A reading of a 500-element sweep's summaries costs ~15 ms: 65
# an hour at the 60 s cap were as much CPU as supervising the sweep itself.
GATE_POLL_OURS = 600.0


@dataclass
class HeldBack:
    gates: Gates
    held: dict[JobId, JobSummary] = field(default_factory=dict)  # not created: its gate is not open
    blocked: dict[JobId, Blocked] = field(default_factory=dict)  # of those, the ones the rule blocks, and why
    due: float = 0.0  # monotonic: when the rule is asked again with nothing moved
    _moved: frozenset[JobId] | None = None  # the jobs with outcomes or ends last seen: a change asks the rule
    _quiet: int = 0  # readings in a row with nothing moved: the poll backs off
    # While only this loop's moves can open a gate: the last reading, and the held jobs' last seqs as it began
    _last: GateReading | None = None
    _seqs: dict[JobId, int] | None = None

    def hold(self, waiting: Iterable[JobSummary]) -> set[JobId]:
        """The members of ``waiting`` whose gate is not open (not started, no outcome, waiting for or
        blocked by other jobs), now held here; what the caller must take out of its line."""
        fresh = [m for m in waiting if m.attempts == 0 and m.outcome is None]
        if not fresh or not self.gates.waits(fresh):
            return set()
        answers = self.gates.answers(fresh)
        for member in fresh:
            answer = answers.get(member.job)
            if answer is None or isinstance(answer, Ready):
                continue
            self.held[member.job] = member
            if isinstance(answer, Blocked):
                self.blocked[member.job] = answer
        return set(self.held)

    def release(self, now: float, moved: frozenset[JobId], *, stopping: bool,
                ours: Callable[[], Collection[JobId]] = frozenset) -> list[JobSummary]:
        """The held jobs whose gate opened, in the order they were held (a job the rule no longer answers
        for, started or ended by someone else meanwhile, is let go too: its own supervision says what it
        is). Asked only when ``moved`` (the jobs of this loop with an outcome or an ended supervision so far)
        changed, or the poll is due. ``ours``: the jobs this loop supervises (asked only after a reading)."""
        if not self.held or stopping or (moved == self._moved and now < self.due):
            return []
        self._quiet = 0 if moved != self._moved else self._quiet + 1
        if self._unchanged(moved, ours):
            self._moved = moved
            self.due = now + self._backoff(GATE_POLL_OURS)
            return []
        self._moved = moved
        seqs = self._seqs_now()  # before the reading: an append after it shows at the next poll
        reading = self.gates.read(list(self.held.values()))
        answers = reading.answers
        opened: list[JobSummary] = []
        for job, _member in list(self.held.items()):
            answer = answers.get(job)
            if answer is None or isinstance(answer, Ready):
                opened.append(self.held.pop(job))
                self.blocked.pop(job, None)
            elif isinstance(answer, Blocked):
                self.blocked[job] = answer
            else:
                self.blocked.pop(job, None)
        only_ours = self._only_ours(reading.open, ours)
        self._last, self._seqs = (reading, seqs) if only_ours else (None, None)
        self.due = now + self._backoff(GATE_POLL_OURS if only_ours else GATE_POLL_MAX)
        return opened

    def _unchanged(self, moved: frozenset[JobId], ours: Callable[[], Collection[JobId]]) -> bool:
        """Whether the last reading still answers, without reading what the held jobs wait for again. Only
        while every job they wait for that can still change is this loop's: then nothing but its moves can
        open a gate, and what else could change the answers (a held job cancelled from another terminal) is
        in the held jobs' records, which must not have grown. A poll then asks only that of the store; a move
        reads the summaries of the jobs that moved, and the rule worked out again from them must answer as
        before (and leave only this loop's jobs open). A 500-element sweep's summaries cost ~15 ms to read:
        every element's end read them all, as did every poll."""
        last = self._last
        if last is None or self._seqs is None or self._seqs_now() != self._seqs:
            return False
        if moved == self._moved:
            return True
        try:
            again = self.gates.again(last, moved ^ (self._moved or frozenset()))
        except (StoreError, UnknownJob):
            return False  # read in full: it says what is wrong
        if any(again.answers.get(job) != last.answers.get(job) for job in self.held) or not self._only_ours(
                again.open, ours):
            return False
        self._last = again
        return True

    def _only_ours(self, open_: frozenset[JobId], ours: Callable[[], Collection[JobId]]) -> bool:
        """Whether only this loop can change what the held jobs wait for: none is blocked, and every job they
        wait for that has no outcome yet is supervised here."""
        if self.blocked or not open_:
            return False
        supervised = ours()
        return all(job in supervised for job in open_)

    def _backoff(self, cap: float) -> float:
        """Seconds to the next poll with nothing moved: doubling from ``GATE_POLL`` up to ``cap``."""
        return min(GATE_POLL * float(2 ** min(self._quiet, 16)), cap)

    def _seqs_now(self) -> dict[JobId, int] | None:
        """The held jobs' last seqs; None when the store cannot say (the next poll then reads in full)."""
        try:
            return self.gates.last_seqs(list(self.held))
        except StoreError:
            return None

    @property
    def waiting(self) -> bool:
        """Whether a held job may still start (one not blocked): the supervision waits for it."""
        return any(job not in self.blocked for job in self.held)

    def words(self) -> dict[JobId, str]:
        """The word the live view shows for each held job: blocked, or waiting."""
        return {job: BLOCKED if job in self.blocked else WAITING for job in self.held}

    def next_at(self) -> float:
        """When the loop must wake for the held jobs (monotonic): the poll while one may still start."""
        return self.due if self.waiting else float("inf")

    def blocked_lines(self) -> tuple[tuple[JobId, str], ...]:
        return tuple((job, answer.line()) for job, answer in self.blocked.items())
