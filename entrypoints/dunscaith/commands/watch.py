"""``dunscaith watch JOB`` (and ``status JOB --watch``): the live view of a job supervised elsewhere.

Read-only, from the record: no lock, no write to the record or the pointer, no scheduler asked. A job
whose pointer names another host is watched there (forwarded as ``status`` is), its lines streamed back
as they come. It ends as the job's supervisor would: the outcome's code once the record settles, 5 when
the supervisor left work outstanding or no supervisor holds a job with no outcome (nobody writes its
record: the watch would never end), and 128+n (130 for Ctrl-C) when a signal ends the watch, quietly:
the job is never touched.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable

import typer

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_outcome, for_signal
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.state import OutcomeKind, label
from dunscaith.domain.services.jobs.watch import WatchEnd, WatchEnding, WatchJob
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.edge import PROG
from dunscaith.ports.job_store import RecordDamaged


@edge.injected
def watch(ctx: typer.Context, job: str = typer.Argument(..., metavar="JOB", help="the job to watch"), *,
          watch_job: Callable[[], WatchJob] = edge.GIVEN, at: edge.At = edge.AT) -> int:
    """Follow a job supervised elsewhere (another terminal or login node, or nobody), read-only, to its end."""
    return follow(at, watch_job, job, ["watch", job])


def watch_status(at: edge.At, watch_job: Callable[[], WatchJob], job: str | None, as_json: bool) -> int:
    """``status JOB --watch``: the same as ``watch JOB``."""
    if job is None:
        raise BadInput("status --watch: name the job to watch (status JOB --watch)")
    if as_json:
        raise BadInput("status --watch shows the live view as lines; --json is a snapshot: use one or the other")
    return follow(at, watch_job, job, ["status", job, "--watch"])


def follow(at: edge.At, watch_job: Callable[[], WatchJob], job: str, words: list[str]) -> int:
    """Watch ``job`` here, or where its pointer says it is recorded (``words``: the command, if the argv is
    not known); the exit code its supervisor would have."""
    edge.owned_elsewhere(at, job, words, follow=True)
    drain = edge.interrupts(at)  # Ctrl-C from here on ends the watch quietly
    edge.open_store(at)
    with edge.store_errors(at, job):
        try:
            end = watch_job()(JobId(job), drain)
        except (JobsError, RecordDamaged) as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}") from None
    return _ending(job, end)


def _ending(job: str, end: WatchEnd) -> int:
    if end.ending is WatchEnding.STOPPED:
        try:
            return for_signal(signal.Signals[end.signal or "SIGINT"].value)
        except KeyError:
            return for_signal(signal.SIGINT.value)
    if end.ending is WatchEnding.UNATTENDED:
        print(f"{PROG}: job {job} is Unattended ({label(end.state)}, no supervisor): only a supervisor writes its "
              f"record, so the watch ends here; reattach with: {PROG} supervise {job} (what its scheduler says "
              f"now: {PROG} status {job})", file=sys.stderr)
        return ExitCode.OUTSTANDING
    outcome = end.state.outcome
    assert outcome is not None
    if end.ending is WatchEnding.OUTSTANDING:
        print(f"{PROG}: job {job}: its supervisor ended with work outstanding (outcome: {outcome.kind}):",
              file=sys.stderr)
        for left in end.left:
            print(f"  {left.what}", file=sys.stderr)
        print(f"  carry it on with: {PROG} reconcile {job}", file=sys.stderr)
        return ExitCode.OUTSTANDING
    if outcome.kind is OutcomeKind.REFUSED:
        print(f"{PROG}: job {job}: refused: {outcome.detail}", file=sys.stderr)
    return int(for_outcome(outcome))


def register(app: typer.Typer) -> None:
    app.command("watch")(watch)
