"""``dunscaith submit / supervise / status / list``: parse, call a use case, render, map to an exit code."""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import typer

from domain.model.jobs.attendance import unattended_by_pointer
from domain.model.jobs.exit_codes import ExitCode, for_outcome
from domain.model.jobs.ids import JobId
from domain.model.jobs.pointer import Pointer
from domain.model.jobs.root_errors import RecordRootRefused
from domain.model.jobs.spec import BadSpec, JobSpec
from domain.model.jobs.state import JobState
from domain.services.jobs.status import JobView
from entrypoints.cli_support import BadInput
from entrypoints.dunscaith import sweeps
from ports.job_store import JobExists, LockBusy, StoreError, UnknownJob

PROG = "dunscaith"

# The argv the command line was parsed from: only "--" tells a COMMAND from a SCRIPT.
RAW_ARGV: list[str] = []


def _c(ctx: typer.Context) -> Any:
    return ctx.obj


@contextmanager
def _store_errors(ctx: typer.Context | None = None, job: str | None = None) -> Iterator[None]:
    try:
        yield
    except RecordRootRefused as exc:
        raise BadInput(str(exc)) from None
    except UnknownJob as exc:
        for pointer, _ in _elsewhere(ctx) if ctx is not None else []:
            if pointer.job == job:
                raise BadInput(f"the record of job {job} is on host {pointer.host}, not here") from None
        raise BadInput(str(exc)) from None
    except LockBusy as exc:
        raise BadInput(f"{exc}: another supervisor (or command) is acting on it now") from None


def _store(ctx: typer.Context) -> Any:
    with _store_errors():
        try:
            return _c(ctx).store()
        except StoreError as exc:  # a store that cannot be opened (a newer schema, not a store): refused
            raise BadInput(str(exc)) from None


def _binary() -> str:
    script = Path(sys.executable).parent / PROG
    return str(script) if script.is_file() else os.path.abspath(sys.argv[0])


def _elsewhere(ctx: typer.Context) -> list[tuple[Pointer, bool]]:
    """Pointers to jobs whose record is on another host, each with the Unattended judgement."""
    container = _c(ctx)
    here = container.host().identity()
    poll = timedelta(seconds=container.settings().supervise.poll)
    now = container.clock().now()
    found = []
    for reading in container.pointers().all():
        pointer = reading.pointer
        if pointer is not None and pointer.root_host != here:
            found.append((pointer, unattended_by_pointer(pointer, now, poll)))
    return found


def _route(ctx: typer.Context, job: str, words: list[str]) -> None:
    """A job whose record is on another host: this command runs there (docs/forwarding.md)."""
    from entrypoints.dunscaith.forwarding import route_by

    c = _c(ctx)
    route_by(c.pointers(), c.host(), c.settings().forwarding, job, words)


def _notice_unattended(ctx: typer.Context, skip: str | None = None) -> None:
    """The Unattended notice every job command prints while a job has work and no supervisor."""
    try:
        views = _c(ctx).status().unattended()
        elsewhere = _elsewhere(ctx)
    except Exception:  # a notice never stops the command it rides on
        return
    for view in views:
        if view.state.name != skip:
            print(f"{PROG}: job {view.state.name} is Unattended ({view.label}, no supervisor); "
                  f"reattach with: {PROG} supervise {view.state.name}", file=sys.stderr)
    for pointer, unattended in elsewhere:
        if unattended and pointer.job != skip:
            print(f"{PROG}: job {pointer.job} on host {pointer.host} looks Unattended (its pointer: "
                  f"{pointer.state}, no supervisor seen recently); reattach with: "
                  f"{PROG} supervise {pointer.job} (it runs on {pointer.host})", file=sys.stderr)


def _default_name(words: list[str]) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in Path(words[0]).name)[:24].strip("-._")
    return f"{stem or 'job'}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _spec(ctx: typer.Context, words: list[str], name: str | None, cluster_name: str) -> JobSpec:
    settings = _c(ctx).settings()
    cluster = settings.cluster(cluster_name)
    if not words:
        raise BadInput("nothing to run: give a command after -- (submit -- sh -c 'echo hi') or a script")
    as_command = "--" in RAW_ARGV
    script: str | None = None
    command: tuple[str, ...] = ()
    if as_command:
        command = tuple(words)
    else:
        if len(words) != 1:
            raise BadInput("give one SCRIPT, or put the command after -- (submit -- COMMAND ARGS...)")
        try:
            script = Path(words[0]).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"script {words[0]}: {getattr(exc, 'strerror', None) or exc}") from None
    from domain.services.jobs.submit import check_name

    try:
        job = check_name(name if name is not None else _default_name(words))
        return JobSpec(job, cluster_name, cluster.adapter, command, script, os.getcwd(),
                       settings.recovery.attempts)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None


def _pointer(ctx: typer.Context, state: JobState, store: Any) -> Pointer:
    identity = store.identity()
    host = identity.host or _c(ctx).host().identity()
    root = getattr(store, "root", None)
    record_root = str(root.path) if root is not None else identity.location
    return Pointer(job=state.name, host=host.hostname, record_root=record_root, root_host=host,
                   binary=_binary(), cluster=state.spec.cluster, adapter=state.spec.adapter, state="recorded",
                   state_at=state.recorded_at, supervised_at=None)


def _drain(ctx: typer.Context) -> Any:
    """Signals drain from the start of the command: one arriving before supervision starts stops it
    before any request goes out, with what is recorded kept."""
    drain = _c(ctx).cancellation()
    drain.install()
    return drain


def _supervise(ctx: typer.Context, job: JobId, drain: Any, *, fresh: bool, bound: float | None = None,
               stream: Any = None) -> int:
    from domain.services.jobs.pointer_notes import Fanout, PointerNotes
    from entrypoints.dunscaith.live_view import LiveView

    container = _c(ctx)
    settings = container.settings()
    store = _store(ctx)
    with _store_errors(ctx, job):
        try:
            state = container.status().one(job).state
        except ValueError as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}; nothing was done to the job") from None
    container.cluster.override(state.spec.cluster)
    container.adapter.override(settings.cluster(state.spec.cluster).adapter)
    scheduler = container.scheduler()
    view = LiveView(job, stream)
    pointers = container.pointers()
    try:
        pointer = pointers.read(job)
    except Exception:
        pointer = _pointer(ctx, state, store)
    notes = PointerNotes(pointers, pointer, settings.supervise.poll,
                         on_problem=lambda m: print(f"{PROG}: {m}", file=sys.stderr))
    if fresh:
        try:
            pointers.write(pointer)
        except Exception as exc:  # display only; the record is what counts
            print(f"{PROG}: pointer of {job} not written: {type(exc).__name__}: {exc}", file=sys.stderr)
    supervisor = container.supervisor(progress=Fanout([view, notes]))
    if hasattr(scheduler, "close"):  # a shared query stops asking for this job when we stop watching it
        ctx.call_on_close(scheduler.close)
    with _store_errors(), store.lock(job) as lock, view:
        sweeps.sweep(container)  # as supervision starts: objects nobody owns are stopped before they start
        if not fresh and state.settled and state.outcome is not None:
            view.line(f"already settled: outcome {state.outcome.kind} ({state.outcome.detail})")
        elif not fresh:
            view.line(f"supervising (attempts so far: {len(state.attempts)})")
        end = supervisor.run(job, lock, drain, bound=bound)
    _show_output(view, end.state, settings.records.root)
    return _ending(job, end, drain)


def _show_output(view: Any, state: JobState | None, root: Path) -> None:
    """Where a local job's output is: the object keeps it (docs/local-scheduler.md)."""
    current = state.current if state is not None else None
    if state is None or state.outcome is None or current is None or current.object_id is None:
        return
    if state.spec.adapter == "local":
        view.line(f"output: {root / 'local-scheduler' / current.object_id / 'stdout'}")


def _ending(job: str, end: Any, drain: Any) -> int:
    from domain.services.jobs.supervise import Ending

    state = end.state
    if end.ending is Ending.DRAINED:
        print(f"{PROG}: job {job}: supervisor stopped by signal; everything received is committed and the job "
              f"continues Unattended; reattach with: {PROG} supervise {job}", file=sys.stderr)
        drain.reraise()
        return ExitCode.INTERNAL  # not reached: the signal ends the process
    if end.ending is Ending.GAVE_UP:
        print(f"{PROG}: job {job}: the supervisor gave up ({end.detail}); the job is Unattended; "
              f"reattach with: {PROG} supervise {job}", file=sys.stderr)
        return ExitCode.GAVE_UP
    if end.ending is Ending.OUTSTANDING:
        outcome = f" (outcome: {state.outcome.kind})" if state and state.outcome else ""
        print(f"{PROG}: job {job}: work outstanding after supervise.wait{outcome}:", file=sys.stderr)
        for left in end.left:
            print(f"  {left.what}", file=sys.stderr)
        print(f"  carry it on with: {PROG} supervise {job}", file=sys.stderr)
        return ExitCode.OUTSTANDING
    assert state is not None and state.outcome is not None
    return int(for_outcome(state.outcome))


def submit(
    ctx: typer.Context,
    words: list[str] = typer.Argument(None, metavar="(-- COMMAND... | SCRIPT)"),
    cluster: str = typer.Option("local", "--cluster", help="a [clusters.NAME] of the configuration"),
    name: str | None = typer.Option(None, "--name", help="the job's name (default: from the command)"),
) -> int:
    """Record a job, create it held, release it once it is known, and supervise it to its outcome."""
    drain = _drain(ctx)
    spec = _spec(ctx, words or [], name, cluster)
    _store(ctx)
    _notice_unattended(ctx)
    try:
        job = _c(ctx).record_job()(spec)
    except JobExists:
        raise BadInput(f"a job named {spec.name} is already recorded; choose another --name") from None
    return _supervise(ctx, job, drain, fresh=True)


def supervise(ctx: typer.Context, job: str = typer.Argument(..., metavar="JOB")) -> int:
    """Reattach a supervisor to a job (refused while another supervisor holds it)."""
    _route(ctx, job, ["supervise", job])
    drain = _drain(ctx)
    _store(ctx)
    _notice_unattended(ctx, skip=job)
    return _supervise(ctx, JobId(job), drain, fresh=False)


def _view_json(view: JobView) -> dict[str, Any]:
    s = view.state
    return {
        "job": s.name,
        "cluster": s.spec.cluster,
        "adapter": s.spec.adapter,
        "state": view.label,
        "outcome": None if s.outcome is None else {"result": str(s.outcome.kind), "detail": s.outcome.detail},
        "settled": s.settled,
        "unattended": view.unattended,
        "supervisor": {"held": view.health.held,
                       "last_loop": view.health.last_loop.isoformat() if view.health.last_loop else None,
                       "healthy": view.health.held and not view.loop_unhealthy},
        "attempts": [{"attempt": a.number, "order": str(a.order), "object_id": a.object_id,
                      "object_state": str(a.object_state) if a.object_state else None,
                      "exit_code": a.exit_code, "signal": a.signal} for a in s.attempts],
        "outstanding": [o.what for o in view.left],
        "escalations": [{"reason": str(e.reason), "attempt": e.attempt, "detail": e.detail,
                         "at": e.at.isoformat(), "delivered": e.delivered} for e in s.escalations],
        "requests": [{"request": r.id, "action": str(r.action), "at": r.at.isoformat(), "answer": r.result,
                      "detail": r.detail} for r in s.requests],
        "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
    }


def _view_line(view: JobView) -> str:
    s = view.state
    words = [f"{s.name}", view.label]
    if s.outcome is not None:
        words.append(f"({s.outcome.detail})")
    if view.health.held:
        words.append("supervised" + (" (loop unhealthy)" if view.loop_unhealthy else ""))
    elif view.unattended:
        words.append("Unattended")
    if view.left and s.outcome is not None:
        words.append(f"{len(view.left)} outstanding")
    if s.pruned_at is not None:
        words.append(f"pruned at {s.pruned_at:%Y-%m-%d %H:%M:%S %Z}")
    return "  ".join(words)


def status(
    ctx: typer.Context,
    job: str | None = typer.Argument(None, metavar="[JOB]"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object (an array without JOB)"),
) -> int:
    """What the record says about a job (every job without JOB), and whether a supervisor watches it."""
    if job is None:
        return list_jobs(ctx, as_json, False)
    _route(ctx, job, ["status", job, *(["--json"] if as_json else [])])
    _store(ctx)
    with _store_errors(ctx, job):
        try:
            view = _c(ctx).status().one(JobId(job))
        except ValueError as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}") from None
    _notice_unattended(ctx, skip=job)
    sweeps.sweep(_c(ctx))
    if as_json:
        print(json.dumps(_view_json(view), indent=2))
        return 0
    print(_view_line(view))
    for a in view.state.attempts:
        obj = f" {a.object_id} {a.object_state or ''}".rstrip() if a.object_id else ""
        print(f"  attempt {a.number}: {a.order}{obj}")
    for e in view.state.escalations:
        print(f"  escalation ({e.reason}): {e.detail}")
    for r in view.state.unanswered:
        print(f"  request {r.id} ({r.action}): not answered yet")
    for o in view.left if view.state.outcome is not None else ():
        print(f"  outstanding: {o.what}")
    if view.unattended:
        print(f"  Unattended: no supervisor holds it; reattach with: {PROG} supervise {job}")
    return 0


def list_jobs(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="a JSON array"),
              show_all: bool = typer.Option(False, "--all", help="pruned jobs too (marked pruned)")) -> int:
    """Every job in this host's records, oldest first (pruned ones only with --all)."""
    _store(ctx)
    views = [v for v in _c(ctx).status().all()
             if show_all or not isinstance(v, JobView) or v.state.pruned_at is None]
    try:
        elsewhere = _elsewhere(ctx)
    except Exception as exc:  # pointers are display only
        print(f"{PROG}: pointers not read: {exc}", file=sys.stderr)
        elsewhere = []
    expired = sweeps.expire(_c(ctx))  # list drops expired entries (reported) and asks no scheduler
    residual = [(e, True) for e in expired.expired] + [(e, False) for e in expired.kept] if expired else []
    if as_json:
        listed: list[dict[str, Any]] = [_view_json(v) if isinstance(v, JobView) else {"job": v[0], "problem": v[1]}
                                        for v in views]
        listed += [{"job": p.job, "host": p.host, "state": p.state, "from_pointer": True, "unattended": u,
                    "supervised_at": p.supervised_at.isoformat() if p.supervised_at else None}
                   for p, u in elsewhere]
        listed += [sweeps.entry_json(e, gone) for e, gone in residual]
        print(json.dumps(listed, indent=2))
        return 0
    for v in views:
        print(_view_line(v) if isinstance(v, JobView) else f"{v[0]}  damaged: {v[1]}")
    for p, u in elsewhere:
        print(f"{p.job}  {p.state}  on host {p.host} (from its pointer{'; looks Unattended' if u else ''})")
    for e, gone in residual:
        print(sweeps.entry_line(e, gone))
    _notice_unattended(ctx)
    return 0


EXIT_CODES = ("Exit codes: 0 succeeded; 1 the outcome is not success; 2 bad input or refused; 3 internal error; "
              "4 the supervisor gave up; 5 work outstanding after supervise.wait; 128+n ended by signal n "
              "(the job goes on). See docs/exit-codes.md.")


def register(app: typer.Typer) -> None:
    app.command("submit", context_settings={"allow_interspersed_args": False}, epilog=EXIT_CODES)(submit)
    app.command("supervise", epilog=EXIT_CODES)(supervise)
    app.command("status")(status)
    app.command("list")(list_jobs)


__all__ = ["RAW_ARGV", "register"]
