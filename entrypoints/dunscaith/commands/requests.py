"""``hold / release / cancel / give-up / abandon / reconcile / prune``: committed on the owning host (this one).

Each asks the live supervisor when there is one, or acts under the job's lock when there is none
(``domain/services/jobs/commands.py``), then sweeps the residual list. Exit codes: 0 confirmed (or, for
``reconcile``, as ``supervise``), 2 refused (by the rules, or by the scheduler when this command carried
it out) or bad input, 5 not answered in time; another host's job is forwarded there (help_text.EPILOGS).
On a sweep (NAME, NAME --state S, resubmit NAME --failed) each chosen element gets the same request
(``domain/services/jobs/sweep_commands.py``), and the command exits with the largest element's code.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

import typer

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.exit_codes import ExitCode
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.prune import DEFAULT_OLDER_THAN, BadDuration, parse_duration
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.state import Action, JobState, label
from dunscaith.domain.model.jobs.summary import state_words
from dunscaith.domain.model.shown import shown
from dunscaith.domain.services.jobs.commands import Answer, Answerer, CommandResult, JobCommands
from dunscaith.domain.services.jobs.sweep_members import NotASweep
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, render
from dunscaith.entrypoints.dunscaith.commands import resubmit_needs
from dunscaith.entrypoints.dunscaith.edge import PROG
from dunscaith.ports.job_store import RecordDamaged, UnknownJob

# Types only, and what one command alone runs (reconcile's supervision, prune's): a hold, a release or a
# cancel imports neither the supervisor nor the pruning.
if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.job_output import JobOutputs
    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep
    from dunscaith.domain.services.jobs.prune import Prune, PruneResult
    from dunscaith.domain.services.jobs.status import JobStatus
    from dunscaith.domain.services.jobs.submit import RecordJob
    from dunscaith.domain.services.jobs.supervise import Supervisor
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep
    from dunscaith.domain.services.jobs.sweep_commands import Skipped, SweepAnswer, SweepCommands
    from dunscaith.domain.services.jobs.sweep_members import Chosen
    from dunscaith.ports.interrupts import Interrupts

_HELP = {
    Action.HOLD: "Hold the job's object (not started yet) until `release`; no new object is released meanwhile.",
    Action.RELEASE: "Release a job held by `hold`.",
    Action.CANCEL: ("Stop the job's object, running or not, and make no new attempt: the outcome is cancelled. "
                    "Says stopping once confirmed, and returns once it stopped (within commands.wait)."),
    Action.GIVE_UP: "Make no new attempt: the current attempt's end is the job's outcome.",
    Action.ABANDON: "Let the job go: its open attempts move to the residual list and the record settles.",
    Action.REQUEUE: "Put the job's started object back in the queue, once (Slurm; the local scheduler refuses).",
    Action.RESUBMIT: ("Replace the job's object that has not started by a new attempt (a new object, a new nonce), "
                      "or run a job that failed again as a new attempt; --cpus, --memory, --time, --gpus, --queue "
                      "and --account give the new attempt other needs."),
}


def _open(at: edge.At, job: str, words: list[str]) -> JobState:
    """The job's state from this host's record (BadInput when it is not here)."""
    edge.owned_elsewhere(at, job, words, follow=True)  # before the store: another host's job needs nothing of this one
    edge.open_store(at)
    state = edge.read_state(at, JobId(job))
    edge.bound_elsewhere(at, state, words)  # a local-scheduler job of another host: run there
    return state


class Acting(NamedTuple):
    """The use cases a job command (hold, release, cancel, resubmit) is given, each a maker (``@edge.injected``):
    the job commands, their sweep form, the supervision a command acts with under the lock, and the
    recording's check of a new attempt's needs."""

    job_commands: Callable[..., JobCommands]
    sweep_commands: Callable[..., SweepCommands]
    supervise_job: Callable[..., SuperviseJob]
    record_job: Callable[[], RecordJob]


def _supervisor_for(cases: Acting, state: JobState) -> Supervisor:
    """The supervisor a command acts with under the lock; it keeps the pointer's last state."""
    return cases.supervise_job(on_problem=edge.say, on_sweep=edge.report_sweep).for_command(state)


def _sweep_commands(at: edge.At, cases: Acting, needs: Resources | None = None) -> SweepCommands:
    """The use case acting on a sweep's elements, each through the job commands of that element."""

    def commands_of(element: JobId) -> JobCommands:
        return cases.job_commands(supervisor=lambda: _supervisor_for(cases, edge.read_state(at, element)),
                                  needs=needs)

    return cases.sweep_commands(commands=commands_of)


def request(at: edge.At, cases: Acting, job: str, action: Action, as_json: bool, state: str | None = None,
            failed: bool = False, needs: Resources | None = None, need_flags: Sequence[str] = ()) -> int:
    drain = edge.interrupts(at)
    if failed and state is not None:
        raise BadInput("--failed chooses the failed elements (those the rule lets run again): it does not go "
                       "with --state")
    if state is not None and state not in state_words():
        raise BadInput(f"--state {shown(state)}: no job is ever in that state; the states are "
                       f"{', '.join(state_words())}")
    words = [str(action), job]
    typed = [*words, *(["--state", state] if state else []), *(["--failed"] if failed else []), *need_flags]
    # before the store: another host's job (or sweep, where this host has no store) needs nothing of this one
    edge.owned_elsewhere(at, job, typed, follow=True, sweeps=True)
    edge.open_store(at)
    sweeps = _sweep_commands(at, cases, needs)
    with edge.store_errors(at, job):
        try:
            chosen = sweeps.choose(job, state, failed=failed)
        except NotASweep as exc:
            raise BadInput(str(exc)) from None
        except UnknownJob:  # nothing of that name here: a sweep whose elements' pointers name another host?
            edge.sweep_owned_elsewhere(at, job, typed)
            raise
    if not chosen.one:  # a sweep's elements, or a pipeline's jobs
        return _on_sweep(at, cases, sweeps, chosen, action, as_json, drain, failed, needs)
    found = edge.read_state(at, JobId(job))
    edge.bound_elsewhere(at, found, words)  # a local-scheduler job of another host: run there
    if found.pruned_at is not None:  # settled and let go: nothing to ask, and its pointer stays removed
        raise BadInput(f"job {job} was pruned at {found.pruned_at.isoformat()}; {action} refused, nothing was done")
    # a need the cluster refuses: exit 2, nothing recorded
    resubmit_needs.refuse_unhonoured(cases.record_job, needs, [found])
    commands = cases.job_commands(supervisor=lambda: _supervisor_for(cases, found), needs=needs)

    said: list[CommandResult] = []

    def stopping(confirmed: CommandResult) -> None:  # a cancel confirmed while its object still stops
        said.append(confirmed)
        if not as_json:
            print(f"job {job}: {action} {confirmed.answer} by {confirmed.by}: {confirmed.detail} (now stopping)",
                  flush=True)

    with edge.store_errors(at, job):
        result = commands(JobId(job), action, drain, on_confirmed=stopping)
    edge.sweep(at)  # after they act: objects nobody owns are stopped before they start
    word = label(result.state) if result.state is not None else "unknown"
    code = _code(result.answer, result.problem)
    # not carried out: its one line on stderr, with --json too (docs/json.md: the object and the line)
    if result.answer is Answer.NOT_ANSWERED:
        print(f"{PROG}: job {job}: {action}: {result.detail}", file=sys.stderr)
    elif result.answer is Answer.REFUSED:
        print(f"{PROG}: job {job}: {action} {result.answer} by {result.by}: {result.detail} (now {word})",
              file=sys.stderr)
    if as_json:
        print(json.dumps(_body(job, action, result, code)))
    elif result.answer is Answer.CONFIRMED:
        _confirmed_lines(at, job, action, result, word, said=bool(said))
    if result.problem:
        print(f"{PROG}: job {job}: not carried out: {result.problem}", file=sys.stderr)
    edge.notice_unattended(at, skip=job)
    if drain.pending() is not None:
        edge.end_by_signal(at)
    return code


def _confirmed_lines(ctx: edge.CommandContext, job: str, action: Action, result: CommandResult, word: str, *,
                     said: bool) -> None:
    """A confirmed answer on stdout; a cancel carried out: "stopping" (``said`` already), then "stopped"."""
    if result.stopped is None:
        print(f"job {job}: {action} {result.answer} by {result.by}: {result.detail} (now {word})")
        if action is Action.RESUBMIT and result.by is Answerer.THIS_COMMAND:  # a command makes no attempt
            print(f"job {job}: the new attempt is made by its supervisor: {PROG} supervise {job}")
        return
    if not said:
        print(f"job {job}: {action} {result.answer} by {result.by}: {result.detail} (now {word})")
    if result.stopped:
        print(f"job {job}: {_object(result)} stopped (now {word})")
    else:
        print(f"job {job}: {_object(result)} still stopping after {edge.settings(ctx).commands.wait:g} s; "
              f"{'its supervisor' if result.by is Answerer.SUPERVISOR else 'the next supervisor or command'} "
              f"records its end (see `{PROG} status {job}`)")


def _body(job: str, action: Action, result: CommandResult, code: int) -> dict[str, Any]:
    """One job's answer as JSON (docs/json.md): the command's object, and each element's of a sweep."""
    body: dict[str, Any] = {"job": job, "action": str(action), "request": result.request,
                            "answer": str(result.answer), "detail": result.detail,
                            "by": str(result.by) if result.by else None,
                            "state": label(result.state) if result.state is not None else "unknown",
                            "problem": result.problem or None}
    if action is Action.CANCEL:
        body["stopped"] = result.stopped
    if code != ExitCode.SUCCEEDED:
        body["error"] = {"code": "not-carried-out" if result.problem and result.answer is Answer.CONFIRMED
                         else str(result.answer), "message": result.problem or result.detail, "exit_code": code}
    return body


def _on_sweep(at: edge.At, cases: Acting, sweeps: SweepCommands, chosen: Chosen, action: Action, as_json: bool,
              drain: Interrupts, failed: bool, needs: Resources | None = None) -> int:
    """The request made of each chosen element (docs/sweeps.md, "Commands on a sweep"): one summary line,
    a line for each element not confirmed, and the largest of the elements' codes (0 when every one was
    confirmed and carried out, or when none was chosen)."""
    if chosen.elements:  # the sweep's elements live where its first one does: run there if another host's
        edge.bound_elsewhere(at, edge.read_state(at, chosen.elements[0].job), [str(action), chosen.word])
    resubmit_needs.refuse_unhonoured(cases.record_job, needs, (edge.read_state(at, e.job) for e in chosen.elements))
    with edge.store_errors(at, chosen.word):
        answer = sweeps(chosen, action, drain, failed=failed)
    edge.sweep(at)  # after they act: objects nobody owns are stopped before they start
    codes = [_code(r.answer, r.problem) for r in answer.results]
    code = max(codes, default=ExitCode.SUCCEEDED)
    _element_problems(answer, codes, action)
    if as_json:
        _sweep_json(chosen, action, failed, answer, codes, code)
    else:
        _sweep_lines(chosen, action, failed, answer)
    edge.notice_unattended(at, skip=chosen.word)
    if drain.pending() is not None:
        edge.end_by_signal(at)
    return code


def _which(chosen: Chosen, failed: bool) -> str:
    """The option that chose the elements, as the summary line names it."""
    return f" --state {chosen.state}" if chosen.state is not None and not failed else (" --failed" if failed else "")


def _element_problems(answer: SweepAnswer, codes: list[int], action: Action) -> None:
    """A line for each element not confirmed and carried out: on stderr, with --json too (docs/json.md)."""
    for r, c in zip(answer.results, codes, strict=True):
        if c == ExitCode.SUCCEEDED or _ended(r):
            continue  # an element refused for having ended already is counted in the summary line
        why = r.problem if r.answer is Answer.CONFIRMED else r.detail
        print(f"{PROG}: job {r.job}: {action} {r.answer}{f' by {r.by}' if r.by else ''}: {why}", file=sys.stderr)


def _sweep_json(chosen: Chosen, action: Action, failed: bool, answer: SweepAnswer, codes: list[int],
                code: int) -> None:
    counts = Counter(str(r.answer) for r in answer.results)
    print(json.dumps({
        **({"pipeline": chosen.pipeline} if chosen.pipeline is not None else {"sweep": chosen.sweep}),
        "action": str(action), "state": chosen.state, "failed": failed,
        "elements_total": chosen.total, "chosen": len(answer.results),
        "counts": {str(a): counts.get(str(a), 0) for a in Answer},
        "exit_code": code,
        "elements": [_body(r.job, action, r, c) for r, c in zip(answer.results, codes, strict=True)],
        "skipped": [{"job": s.job, "state": s.state, "why": s.why} for s in answer.skipped],
    }))
    if code != ExitCode.SUCCEEDED:  # what was not done, in one line on stderr beside the object
        print(f"{PROG}: {chosen.what}{_which(chosen, failed)}: {answers_line(str(action), answer.results)}",
              file=sys.stderr)


def _sweep_lines(chosen: Chosen, action: Action, failed: bool, answer: SweepAnswer) -> None:
    which = _which(chosen, failed)
    for line in _skipped_lines(answer.skipped, action):
        print(f"{PROG}: {line}", file=sys.stderr)
    if not answer.results:
        what = f" {chosen.state}" if chosen.state is not None else (" to run again" if failed else "")
        print(f"{chosen.what}{which}: {action}: no {'job' if chosen.pipeline else 'element'}{what}, nothing was asked")
    else:
        print(f"{chosen.what}{which}: {answers_line(str(action), answer.results)}")
    waiting = [r for r in answer.results if action is Action.RESUBMIT and r.answer is Answer.CONFIRMED
               and r.by is Answerer.THIS_COMMAND]
    if waiting:  # a command makes no attempt: the sweep's supervisor does
        whose = "pipeline's" if chosen.pipeline is not None else "sweep's"
        print(f"{len(waiting)} {'job' if chosen.pipeline else 'element'}{'s' if len(waiting) != 1 else ''} to run "
              f"again: the new attempts are made by the {whose} supervisor: {PROG} supervise {chosen.word}")


def _ended(result: CommandResult) -> bool:
    """Refused because the element had its outcome already (the summary line counts them)."""
    return result.answer is Answer.REFUSED and result.state is not None and result.state.outcome is not None


def _skipped_lines(skipped: tuple[Skipped, ...], action: Action) -> list[str]:
    """One line per reason: ``exp-12 succeeded: not resubmitted``, or ``480 elements ...`` naming a few."""
    by_why: dict[str, list[str]] = {}
    for s in skipped:
        by_why.setdefault(s.why, []).append(s.job)
    lines = []
    for why, jobs in by_why.items():
        if len(jobs) == 1:
            lines.append(f"{jobs[0]} {why}")
        else:
            few = ", ".join(jobs[:5]) + (", …" if len(jobs) > 5 else "")
            lines.append(f"{len(jobs)} elements {why} ({few})")
    return lines


def answers_line(action: str, results: tuple[CommandResult, ...] | list[CommandResult]) -> str:
    """``cancel: 480 confirmed, 20 refused (already ended)``: one line for a command on many elements."""
    if not results:
        return f"{action}: no element asked"
    answers = Counter(r.answer for r in results)
    parts = []
    for answer in (Answer.CONFIRMED, Answer.REFUSED, Answer.NOT_ANSWERED):
        count = answers.get(answer, 0)
        if not count:
            continue
        notes = _ANSWER_NOTES.get(answer, _no_notes)(results, count)
        parts.append(f"{count} {answer}" + (f" ({', '.join(notes)})" if notes else ""))
    return f"{action}: {', '.join(parts)}"


def _confirmed_notes(results: Sequence[CommandResult], count: int) -> list[str]:
    """Of the confirmed: how many were not carried out, and how many objects are still stopping."""
    failed = sum(1 for r in results if r.answer is Answer.CONFIRMED and r.problem)
    stopping = sum(1 for r in results if r.answer is Answer.CONFIRMED and not r.problem and r.stopped is False)
    notes = [f"{failed} not carried out"] if failed else []
    return notes + ([f"{stopping} still stopping"] if stopping else [])


def _refused_notes(results: Sequence[CommandResult], count: int) -> list[str]:
    """Of the refused: how many had ended already (all of them, said as such)."""
    ended = sum(1 for r in results if _ended(r))
    return ["already ended" if ended == count else f"{ended} already ended"] if ended else []


def _no_notes(results: Sequence[CommandResult], count: int) -> list[str]:
    return []


# what answers_line says in brackets after each answer's count
_ANSWER_NOTES: dict[Answer, Callable[[Sequence[CommandResult], int], list[str]]] = {
    Answer.CONFIRMED: _confirmed_notes, Answer.REFUSED: _refused_notes}


def _object(result: CommandResult) -> str:
    current = result.state.current if result.state is not None else None
    return f"object {current.object_id}" if current is not None and current.object_id else "its object"


def _code(answer: Answer, problem: str) -> int:
    if answer is Answer.CONFIRMED and problem:
        return ExitCode.BAD_INPUT  # confirmed, but the scheduler refused it (or it could not be done now)
    return {Answer.CONFIRMED: ExitCode.SUCCEEDED, Answer.REFUSED: ExitCode.BAD_INPUT,
            Answer.NOT_ANSWERED: ExitCode.OUTSTANDING}[answer]


_JOB_HELP = ("the job (an element NAME-7, a step NAME.STEP too), or a sweep's name: every element of it, or a "
             "pipeline's: every job of its steps")
_STATE_HELP = "the elements of the sweep JOB in this state only (docs/sweeps.md)"


def _command(action: Action) -> Callable[..., int]:
    if action is Action.RESUBMIT:
        def resubmit(ctx: typer.Context, job: str = typer.Argument(..., metavar="JOB", help=_JOB_HELP),
                     as_json: bool = typer.Option(False, "--json", help="one JSON object"),
                     state: str | None = typer.Option(None, "--state", metavar="STATE", help=_STATE_HELP),
                     failed: bool = typer.Option(False, "--failed", help=(
                         "the sweep JOB's failed, settled elements, run again as new attempts (never one that "
                         "succeeded or may still run)")),
                     cpus: str | None = resubmit_needs.CPUS, memory: str | None = resubmit_needs.MEMORY,
                     time: str | None = resubmit_needs.TIME, gpus: str | None = resubmit_needs.GPUS,
                     queue: str | None = resubmit_needs.QUEUE, account: str | None = resubmit_needs.ACCOUNT,
                     *, job_commands: Callable[..., JobCommands] = edge.GIVEN,
                     sweep_commands: Callable[..., SweepCommands] = edge.GIVEN,
                     supervise_job: Callable[..., SuperviseJob] = edge.GIVEN,
                     record_job: Callable[[], RecordJob] = edge.GIVEN, at: edge.At = edge.AT) -> int:
            needs = resubmit_needs.parsed(cpus, memory, time, gpus, queue, account)
            cases = Acting(job_commands, sweep_commands, supervise_job, record_job)
            return request(at, cases, job, action, as_json, state, failed, needs,
                           resubmit_needs.typed(cpus, memory, time, gpus, queue, account))

        resubmit.__doc__ = _HELP[action]
        return edge.injected(resubmit)

    def command(ctx: typer.Context, job: str = typer.Argument(..., metavar="JOB", help=_JOB_HELP),
                as_json: bool = typer.Option(False, "--json", help="one JSON object"),
                state: str | None = typer.Option(None, "--state", metavar="STATE", help=_STATE_HELP), *,
                job_commands: Callable[..., JobCommands] = edge.GIVEN,
                sweep_commands: Callable[..., SweepCommands] = edge.GIVEN,
                supervise_job: Callable[..., SuperviseJob] = edge.GIVEN,
                record_job: Callable[[], RecordJob] = edge.GIVEN, at: edge.At = edge.AT) -> int:
        return request(at, Acting(job_commands, sweep_commands, supervise_job, record_job), job, action, as_json,
                       state)

    command.__doc__ = _HELP[action]
    return edge.injected(command)


@edge.injected
def reconcile(ctx: typer.Context, job: str = typer.Argument(..., metavar="JOB"),
              as_json: bool = typer.Option(False, "--json", help="one JSON object"), *,
              status: Callable[[], JobStatus] = edge.GIVEN,
              supervise_job: Callable[..., SuperviseJob] = edge.GIVEN,
              supervise_sweep: Callable[..., SuperviseSweep] = edge.GIVEN,
              notify_sweep: Callable[[], NotifySweep] = edge.GIVEN, at: edge.At = edge.AT) -> int:
    """Carry on what an exit 5 left outstanding (escalations to deliver, objects stopping), or supervise a
    job with no outcome yet: for at most supervise.wait (300 s unless set), then exit 5 with what is left;
    with a live supervisor, say so (it carries it on)."""
    from dunscaith.entrypoints.dunscaith import supervision, sweep_supervision

    drain = edge.interrupts(at)
    cases = supervision.Supervising(supervise_job, supervise_sweep, notify_sweep)
    try:
        state = _open(at, job, ["reconcile", job])
    except BadInput:  # a sweep's or a pipeline's name: its supervision carries on what is left, its notice included
        recorded = sweep_supervision.recorded_as(at, job, cases)
        if recorded not in ("sweep", "pipeline"):
            raise
        edge.notice_unattended(at, skip=job)
        if recorded == "pipeline":
            return sweep_supervision.supervise_pipeline(at, JobId(job), drain, cases, fresh=False, as_json=as_json)
        return sweep_supervision.supervise_sweep(at, JobId(job), drain, cases, fresh=False, as_json=as_json)
    view = status().one(state.name)
    if view.health.held or view.sweep_held:
        edge.sweep(at)
        view = status().one(state.name)
        if as_json:
            print(json.dumps({"job": job, "exit_code": 0, "supervised": True, "status": render.view_json(view)}))
        else:
            whose = "its sweep's supervisor is live and starts it" if view.sweep_held else "its supervisor is live"
            print(f"job {job}: {whose} and carries the outstanding work on (now {view.label})")
        return 0
    edge.notice_unattended(at, skip=job)
    wait = edge.settings(at).supervise.wait
    if state.outcome is None:  # said first: it may take that long, and end with the job still going
        print(f"job {job}: no outcome yet: supervised for at most supervise.wait ({wait:g} s), then exit 5 with "
              f"what is left (to follow it to its outcome: {PROG} supervise {job})",
              file=sys.stderr if as_json else sys.stdout, flush=True)
    code = supervision.supervise(at, state.name, drain, cases.job(), fresh=False, bound=wait,
                                 stream=sys.stderr if as_json else None)
    if as_json:
        view = status().one(state.name)
        print(json.dumps({"job": job, "exit_code": code, "supervised": False, "status": render.view_json(view)}))
    return code


def _pruning_json(result: PruneResult) -> dict[str, Any]:
    return {"job": result.job, "result": str(result.result), "detail": result.detail,
            "pruned_at": result.pruned_at.isoformat() if result.pruned_at else None,
            "problem": result.problem or None}


def _remove_outputs(at: edge.At, outputs: JobOutputs, jobs: list[JobId]) -> list[str]:
    """The local scheduler's object folders of these pruned jobs, removed (``JobOutputs.remove_folders``)."""
    return outputs.remove_folders(edge.read_state(at, job) for job in jobs)


@edge.injected
def prune(ctx: typer.Context, job: str | None = typer.Argument(None, metavar="JOB"),
          older_than: str | None = typer.Option(None, "--older-than", metavar="DURATION",
                                                help="prune settled jobs whose record last changed this long "
                                                     "ago or more (30d, 12h, 90m; default 30d)"),
          outputs: bool = typer.Option(False, "--outputs",
                                       help="also remove the local scheduler's folders (stdout, stderr) of "
                                            "the jobs pruned"),
          as_json: bool = typer.Option(False, "--json", help="one JSON object"), *,
          prune: Callable[[], Prune] = edge.GIVEN, job_outputs: Callable[[], JobOutputs] = edge.GIVEN,
          at: edge.At = edge.AT) -> int:
    """Let settled jobs go for good: their records are kept, their pointers removed, and sweeps stop any
    object of their names that has not started. The one JOB named, or every settled job older than
    --older-than."""
    from dunscaith.domain.services.jobs.prune import Pruning

    if job is not None and older_than is not None:
        raise BadInput("give JOB or --older-than, not both")
    age = _age(older_than)
    edge.open_store(at)
    edge.check_writable(at)  # the residual entry is added before the record's event: both, or neither
    pruning = prune()
    if job is not None:
        result = _prune_one(at, pruning, job)
        if result.result is Pruning.REFUSED:
            return _prune_refused(result, as_json)
        done, problems = [result], list[str]()
    else:
        with edge.store_errors():
            done, problems = pruning.older_than(age)
    edge.sweep(at)  # after it acts: a pruned job's objects that never started are stopped
    removed = (_remove_outputs(at, job_outputs(), [r.job for r in done if r.result is not Pruning.REFUSED])
               if outputs else [])
    if as_json:
        _pruned_json(job, older_than, done, problems, removed)
    else:
        _pruned_lines(job, older_than, done, removed)
    for line in problems + [r.problem for r in done if r.problem]:
        print(f"{PROG}: {line}", file=sys.stderr)
    edge.notice_unattended(at)
    return ExitCode.SUCCEEDED


def _age(older_than: str | None) -> timedelta:
    try:
        return DEFAULT_OLDER_THAN if older_than is None else parse_duration(older_than)
    except BadDuration as exc:
        raise BadInput(str(exc)) from None


def _prune_one(at: edge.At, pruning: Prune, job: str) -> PruneResult:
    """The one job named, pruned here (run on its own host if its record is another's)."""
    edge.owned_elsewhere(at, job, ["prune", job])
    with edge.store_errors(at, job):
        try:
            return pruning.one(JobId(job))
        except (JobsError, RecordDamaged) as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}; nothing was done") from None


def _prune_refused(result: PruneResult, as_json: bool) -> int:
    if not as_json:
        raise BadInput(f"prune refused: {result.detail}")
    print(json.dumps({"action": "prune", **_pruning_json(result), "outputs_removed": [],
                      "error": {"code": "refused", "message": f"prune refused: {result.detail}",
                                "exit_code": ExitCode.BAD_INPUT}}))
    print(f"{PROG}: prune refused: {result.detail}", file=sys.stderr)
    return ExitCode.BAD_INPUT


def _pruned_json(job: str | None, older_than: str | None, done: list[PruneResult], problems: list[str],
                 removed: list[str]) -> None:
    body: dict[str, Any] = ({"action": "prune", **_pruning_json(done[0])} if job is not None else
                            {"action": "prune", "older_than": older_than or "30d",
                             "pruned": [_pruning_json(r) for r in done], "problems": problems})
    body["outputs_removed"] = removed
    print(json.dumps(body))


def _pruned_lines(job: str | None, older_than: str | None, done: list[PruneResult], removed: list[str]) -> None:
    for result in done:
        print(result.detail)
    if job is None and not done:
        print(f"no settled job older than {older_than or '30d'} to prune")
    for folder in removed:
        print(f"removed output folder {folder}")


def register(app: typer.Typer) -> None:
    # each command's exit codes: help_text.EPILOGS
    for action in Action:
        app.command(str(action))(_command(action))
    app.command("reconcile")(reconcile)
    app.command("prune")(prune)

