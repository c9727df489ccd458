"""One supervision of a sweep from the command line (``submit --array/--each``, ``supervise NAME``,
``supervise --all``): every element this process can take, in one loop, shown as one live view, its
ending shown in one line and mapped to the exit code (docs/sweeps.md, docs/exit-codes.md)."""

from __future__ import annotations

import json
import signal
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any, cast

from dunscaith.domain.model.jobs.dependencies import Blocked
from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_signal
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.sweep_counts import counts_words
from dunscaith.domain.services.jobs.gates import PipelineReport
from dunscaith.domain.services.jobs.supervise import Ending
from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep, SweepSupervised, UnknownSweep
from dunscaith.domain.services.jobs.sweep_lock import SweepSupervisedElsewhere
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.edge import PROG
from dunscaith.entrypoints.dunscaith.supervision import DropWhenClosed, Supervising
from dunscaith.ports.interrupts import Interrupts

_NAMED = 10  # elements named in the one-line summary; the rest are counted


def _use(cases: Supervising) -> SuperviseSweep:
    return cases.supervise_sweep(one=cases.job(), on_problem=edge.say)


def recorded_as(ctx: edge.CommandContext, name: str, cases: Supervising) -> str | None:
    """What ``name`` is recorded as here: "sweep", "job", or None (nothing of that name)."""
    with edge.store_errors():
        return _use(cases).recorded_as(name)


def supervise_sweep(ctx: edge.CommandContext, sweep: JobId, drain: Interrupts, cases: Supervising, *, fresh: bool,
                    as_json: bool = False,
                    stream: IO[str] | None = None, job_exit: bool = False) -> int:
    """Supervise every element of ``sweep`` that no live supervisor holds, to its outcome; the exit code.
    ``fresh``: the sweep was just recorded. ``as_json``: the live view on stderr, the result on stdout.
    ``job_exit`` has no meaning for many jobs: a sweep's code is dunscaith's (docs/exit-codes.md)."""
    use = _use(cases)
    shown = cast(IO[str], DropWhenClosed(sys.stderr if as_json else (stream or sys.stdout)))
    with edge.store_errors():
        try:
            done = use(sweep, drain, fresh=fresh, stream=shown)
        except UnknownSweep:
            raise BadInput(f"no job or sweep named {sweep} is recorded") from None
        except SweepSupervisedElsewhere as exc:  # one supervisor per sweep: --max-running holds
            raise BadInput(str(exc)) from None
    def notify(document: dict[str, Any]) -> str:  # the sweep's one notice for its outcome (docs/notifications.md)
        with edge.store_errors():
            return str(cases.notify_sweep()(sweep, done.elements, document, drain))

    return _end(ctx, done, drain, as_json, what=f"sweep {sweep}", again=f"{PROG} supervise {sweep}",
                stdout_kept=as_json or stream is sys.stderr, notify=notify,
                gave_up=lambda document, detail: cases.notify_sweep().gave_up(sweep, done.elements, document, detail))


def supervise_pipeline(ctx: edge.CommandContext, name: JobId, drain: Interrupts, cases: Supervising, *, fresh: bool,
                       as_json: bool = False, stream: IO[str] | None = None) -> int:
    """Supervise every step of the pipeline ``name`` in one loop, to its end (docs/pipelines.md): exit 0 only
    when every step succeeded, 1 when one failed or is blocked by one that did; ``fresh``: just recorded."""
    use = _use(cases)
    shown = cast(IO[str], DropWhenClosed(sys.stderr if as_json else (stream or sys.stdout)))
    with edge.store_errors():
        try:
            done = use.pipeline(name, drain, fresh=fresh, stream=shown)
        except UnknownSweep:
            raise BadInput(f"no job, sweep or pipeline named {name} is recorded") from None
        except SweepSupervisedElsewhere as exc:  # one supervisor per pipeline, and per sweep step
            raise BadInput(str(exc)) from None
        report = done.report
    again = f"{PROG} supervise {name}"

    def notify(document: dict[str, Any]) -> str:  # the pipeline's one notice for its end (blocked jobs have none)
        ended_jobs = tuple(e for e in done.elements if e.job not in dict(done.blocked))
        with edge.store_errors():
            return str(cases.notify_sweep()(name, ended_jobs, document, drain))

    ended = report.end if report is not None else None
    if done.drained or ended is None:
        return _end(ctx, done, drain, as_json, what=f"pipeline {name}", again=again,
                    stdout_kept=as_json or stream is sys.stderr, steps=_steps_of(report),
                    gave_up=lambda document, detail: cases.notify_sweep().gave_up(name, done.elements, document,
                                                                                   detail))
    end = _SweepEnd(int(ended.exit_code), "outcome", ended.line)
    return _end(ctx, done, drain, as_json, what=f"pipeline {name}", again=again,
                stdout_kept=as_json or stream is sys.stderr, notify=notify, settled=end, steps=_steps_of(report))


def _steps_of(report: PipelineReport | None) -> list[dict[str, Any]]:
    """Each step's standing in a pipeline's result object (docs/json.md, "A pipeline's result")."""
    if report is None:
        return []
    blocked = {job: answer.line() for job, answer in report.answers.items() if isinstance(answer, Blocked)}
    out = []
    for step, end in zip(report.pipeline.steps, report.steps, strict=True):
        first_blocked = next((blocked[m.job] for m in step.group.members if m.job in blocked), None)
        out.append({"step": step.step, "job": step.job, "kind": "sweep" if step.group.is_sweep else "job",
                    "state": end.state, "succeeded": end.succeeded, "not_success": end.not_success,
                    "blocked": end.blocked, "going": end.going, "blocked_by": first_blocked})
    return out


def supervise_unattended(ctx: edge.CommandContext, drain: Interrupts, cases: Supervising, *,
                         as_json: bool = False) -> int:
    """``supervise --all``: every Unattended job and sweep element of this store, in one loop."""
    use = _use(cases)
    shown = cast(IO[str], DropWhenClosed(sys.stderr if as_json else sys.stdout))
    with edge.store_errors():
        done = use.unattended(drain, title=JobId("all"), stream=shown)
    if not done.elements:
        print(f"{PROG}: no Unattended job: nothing to supervise", file=sys.stderr)
    return _end(ctx, done, drain, as_json, what="supervise --all", again=f"{PROG} supervise --all",
                notify=lambda _: _notify_each(ctx, use, cases, done, drain))


def _notify_each(ctx: edge.CommandContext, use: SuperviseSweep, cases: Supervising, done: SweepSupervised,
                 drain: Interrupts) -> str:
    """``supervise --all``: each sweep it took that reached its outcome gets its one notice, its own result
    object as ``supervise NAME`` would print it; what is left undelivered, or ""."""
    problems = []
    for sweep in sorted({e.sweep for e in done.elements if e.sweep is not None}):
        with edge.store_errors():
            members = tuple(use.elements(sweep))
        part = SweepSupervised(sweep, tuple(x for x in done.ends if x.job.startswith(f"{sweep}-")), (), False,
                               members, 0)
        end = _settled(part, f"sweep {sweep}", f"{PROG} supervise {sweep}")
        if end.ending != "outcome":
            continue
        document = _result(part, Counter(e.state for e in members), end.ending, end.code, end.message)
        with edge.store_errors():
            problem = cases.notify_sweep()(sweep, members, document, drain)
        if problem:
            problems.append(problem)
    return "; ".join(problems)


def _named(jobs: list[JobSummary]) -> str:
    names = ", ".join(j.job for j in jobs[:_NAMED])
    return names + (f", … ({len(jobs) - _NAMED} more)" if len(jobs) > _NAMED else "")


def _end(ctx: edge.CommandContext, done: SweepSupervised, drain: Interrupts, as_json: bool, *, what: str,
         again: str, stdout_kept: bool = False, notify: Callable[[dict[str, Any]], str] | None = None,
         settled: _SweepEnd | None = None, steps: list[dict[str, Any]] | None = None,
         gave_up: Callable[[dict[str, Any], str], str] | None = None) -> int:
    """``stdout_kept``: stdout holds what a script reads (--json's object, --parsable's name) and nothing else.
    ``notify``: hands the sweep's result to notify.command at its outcome; what is left undelivered, or "".
    ``settled``: how it ended when the caller knows better (a pipeline's rule); ``steps``: a pipeline's.
    ``gave_up``: hands the result to notify.command when the supervision gave up; what went wrong, or ""."""
    words = Counter(e.state for e in done.elements)
    end = _drained(drain, what, again) if done.drained else (settled or _blocked(done, what, again)
                                                             or _settled(done, what, again))
    if notify is not None and end.ending == "outcome" and done.elements:
        problem = notify(_result(done, words, end.ending, end.code, end.message, steps))
        if problem:
            end = _SweepEnd(int(ExitCode.OUTSTANDING), "outstanding",
                            f"{what}: {end.message.removeprefix(what + ': ')}; {problem}; carry it on with: {again}")
    if gave_up is not None and end.ending == "gave-up":  # told once, best effort, as a job's give-up is
        problem = gave_up(_result(done, words, end.ending, end.code, end.message, steps), end.message)
        if problem:
            print(f"{PROG}: {problem}", file=sys.stderr, flush=True)
    if end.message:
        print(f"{PROG}: {end.message}" if end.code else end.message,
              file=sys.stderr if end.code or as_json or stdout_kept else sys.stdout, flush=True)
    if as_json:
        print(json.dumps(_result(done, words, end.ending, end.code, end.message, steps), indent=2), flush=True)
    if end.by_signal:
        edge.end_by_signal(ctx)
    return end.code


@dataclass(frozen=True)
class _SweepEnd:
    """How a supervised sweep ended: its exit code, the result object's ``ending``, the line said."""

    code: int
    ending: str
    message: str
    by_signal: bool = False


def _drained(drain: Interrupts, what: str, again: str) -> _SweepEnd:
    """Stopped by a signal: the code of that signal (3 if it is not one Python knows)."""
    name = drain.pending()
    known = name is not None and name in signal.Signals.__members__
    code = int(for_signal(signal.Signals[name].value)) if known and name is not None else int(ExitCode.INTERNAL)
    return _SweepEnd(code, "drained",
                     f"{what}: supervisor stopped by signal; everything received is committed; started "
                     f"{'jobs' if what.startswith('pipeline ') else 'elements'} continue Unattended and the others "
                     f"have not been sent; reattach with: {again}",
                     by_signal=True)


def _settled(done: SweepSupervised, what: str, again: str) -> _SweepEnd:
    """Not stopped by a signal: every element succeeded, some work is left (or gave up), or some failed."""
    elements = list(done.elements)
    succeeded = [e for e in elements if e.outcome == "succeeded"]
    unsettled = [e for e in elements if not e.settled]
    not_ok = [e for e in elements if e.outcome is not None and e.outcome != "succeeded"]
    gave_up = [end.job for end in done.ends if end.end.ending is Ending.GAVE_UP]
    if not elements:
        return _SweepEnd(int(ExitCode.SUCCEEDED), "outcome", "")
    if len(succeeded) == len(elements):
        return _SweepEnd(int(ExitCode.SUCCEEDED), "outcome", f"{what}: all {len(elements)} succeeded")
    if gave_up or unsettled:
        held = [f"{job} ({why})" for job, why in done.elsewhere]
        return _SweepEnd(int(ExitCode.GAVE_UP if gave_up else ExitCode.OUTSTANDING),
                         "gave-up" if gave_up else "outstanding",
                         f"{what}: {len(succeeded)} succeeded, {len(not_ok)} did not, {len(unsettled)} not settled"
                         f"{': ' + _named(unsettled) if unsettled else ''}"
                         f"{'; not taken: ' + ', '.join(held[:_NAMED]) if held else ''}; carry it on with: {again}")
    return _not_success(what, succeeded, not_ok)


def _blocked(done: SweepSupervised, what: str, again: str) -> _SweepEnd | None:
    """Every job settled but those never created because what they wait for did not succeed (exit 1)."""
    held = dict(done.blocked)
    if not held or not all(e.settled or e.job in held for e in done.elements):
        return None
    if any(end.end.ending is Ending.GAVE_UP for end in done.ends):
        return None  # a supervision that gave up says so first (exit 4)
    job, why = done.blocked[0]
    return _SweepEnd(int(ExitCode.NOT_SUCCESS), "blocked",
                     f"{what}: {len(held)} not created, {job} {why}; run what blocked it again "
                     f"({PROG} resubmit NAME --failed), then: {again}")


def _not_success(what: str, succeeded: list[JobSummary], not_ok: list[JobSummary]) -> _SweepEnd:
    """Every element settled, some not succeeded: their outcomes counted and named."""
    said = counts_words(str(e.outcome) for e in not_ok)  # the outcomes other than success, as status says them
    message = f"{what}: {len(succeeded)} succeeded, {said}: {_named(not_ok)}"
    if what.startswith("sweep "):
        message += f" ({PROG} status {what.removeprefix('sweep ')} --state {not_ok[0].outcome})"
    return _SweepEnd(int(ExitCode.NOT_SUCCESS), "outcome", message)


def _result(done: SweepSupervised, words: Counter[str], ending: str, code: int, message: str,
            steps: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The sweep's result object (docs/json.md, "A sweep's result"); a pipeline's has its ``steps`` too
    ("A pipeline's result") and names the pipeline under ``pipeline`` as well as ``sweep``."""
    shown: dict[str, Any] = {} if steps is None else {"pipeline": done.sweep, "steps": steps}
    return shown | {
        "sweep": done.sweep,
        "ending": ending,
        "exit_code": code,
        "message": message,
        "counts": dict(sorted(words.items())),
        "queries": done.queries,
        "not_taken": [{"job": job, "why": why} for job, why in done.elsewhere],
        "blocked": [{"job": job, "why": why} for job, why in done.blocked],
        "elements": [{"job": e.job, "index": e.sweep_index, "state": e.state, "outcome": e.outcome,
                      "outcome_detail": e.outcome_detail, "attempts": e.attempts, "settled": e.settled,
                      "object_id": e.object_id} for e in done.elements],
    }
