"""What every job command shares at the edge: the container, errors mapped to one line, notices, sweeps."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import typer

from dunscaith.domain.model.jobs.binding import bound_elsewhere as bound_to
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer, PointerError
from dunscaith.domain.model.jobs.root_errors import RecordRootRefused
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.model.shown import one_line, reason
from dunscaith.domain.services.jobs.pointer_notes import PointerNotes
from dunscaith.domain.services.jobs.pointer_survey import PointerSurvey, PointerSurveys
from dunscaith.domain.services.jobs.sweep import SweepReport
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import render
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import JobStore, LockBusy, RecordDamaged, StoreError, UnknownJob

# The container is built by the root callback (app.py), never for `remote`: importing it here would put
# dependency-injector and pydantic on the start-up path of every wrapped process.
if TYPE_CHECKING:
    from dunscaith.entrypoints.dunscaith.container import Adapters, Container, UseCases
    from dunscaith.entrypoints.dunscaith.settings import DunscaithSettings

PROG = "dunscaith"


def say(line: str) -> None:
    print(f"{PROG}: {one_line(line)}", file=sys.stderr)


# --- the container ---------------------------------------------------------------------------------------
def container_of(ctx: typer.Context) -> Container:
    """The command's container: the one a test gave (``run(obj=)``), else built now, once per command
    (so help and argument errors never pay for it), and shut down when the command ends."""
    root = ctx.find_root()
    if root.obj is None:
        from dunscaith.entrypoints.dunscaith.container import Container

        root.obj = Container()
        root.call_on_close(root.obj.shutdown_resources)
    return cast("Container", root.obj)


def adapters(ctx: typer.Context) -> Adapters:
    return container_of(ctx).adapters.container


def use_cases(ctx: typer.Context) -> UseCases:
    return container_of(ctx).use_cases.container


def settings(ctx: typer.Context) -> DunscaithSettings:
    return container_of(ctx).settings()


def interrupts(ctx: typer.Context) -> Interrupts:
    """Signals drain from the start of the command: one arriving before supervision starts stops it
    before any request goes out, with what is recorded kept."""
    return adapters(ctx).interrupts().install()


def end_by_signal(ctx: typer.Context) -> None:
    """After a drain: end the process by the signal that started it (the shell sees 128+n)."""
    adapters(ctx).interrupts().reraise()


# --- errors ----------------------------------------------------------------------------------------------
@contextmanager
def store_errors(ctx: typer.Context | None = None, job: str | None = None) -> Iterator[None]:
    try:
        yield
    except RecordRootRefused as exc:
        raise BadInput(str(exc)) from None
    except UnknownJob as exc:
        pointer = _pointer_elsewhere(ctx, job) if ctx is not None and job is not None else None
        if pointer is not None:
            raise BadInput(f"the record of job {job} is on host {pointer.host}, not here") from None
        raise BadInput(str(exc)) from None
    except LockBusy as exc:
        raise BadInput(f"{exc}: another supervisor (or command) is acting on it now") from None
    except RecordDamaged as exc:  # that job's damage only: nothing was done to it
        raise BadInput(f"the record of job {exc.job} does not read: {exc}; nothing was done to the job") from None
    except StoreError as exc:  # the store refused (damaged, not a store, locked too long, a server gone)
        raise BadInput(str(exc)) from None


def _pointer_elsewhere(ctx: typer.Context, job: str) -> Pointer | None:
    try:
        return pointer_surveys(ctx).elsewhere_of(JobId(job))
    except Exception:  # display only: the refusal names no host then
        return None


def open_store(ctx: typer.Context) -> JobStore:
    with store_errors():
        try:
            return adapters(ctx).store()
        except StoreError as exc:  # a store that cannot be opened (a newer schema, not a store): refused
            raise BadInput(str(exc)) from None


def check_writable(ctx: typer.Context) -> None:
    """Before a command's first side effect outside the store (prune's residual entry): a store that would
    refuse its write refuses the command now, so nothing else is changed either."""
    problem = adapters(ctx).store_integrity()(open_store(ctx))
    if problem is not None:
        raise BadInput(problem)


def read_state(ctx: typer.Context, job: JobId, after: str = "; nothing was done to the job") -> JobState:
    """The job's state from this host's record (BadInput when it is not here or does not read)."""
    with store_errors(ctx, job):
        try:
            return use_cases(ctx).status().one(job).state
        except (JobsError, RecordDamaged) as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}{after}") from None


# --- other hosts' jobs -----------------------------------------------------------------------------------
def shared_location(ctx: typer.Context) -> str | None:
    """Where the records are when the store is shared by login nodes (bound to no host), else None: a
    pointer naming it points here, whichever host wrote it."""
    store = open_store(ctx)
    identity = store.identity()
    return store.location() if identity.host is None and identity.backend != "memory" else None


def bound_elsewhere(ctx: typer.Context, state: JobState, words: list[str] | None = None) -> None:
    """A job whose objects live on another host (a local-scheduler job in a shared store): this command
    re-runs itself on that host over SSH and exits as it did there, exactly as for a pointer naming
    another host (docs/forwarding.md). ``words``: the command, if the argv is not known."""
    from dunscaith.entrypoints.dunscaith.forwarding import ARGV, forward_and_exit

    if bound_to(state, adapters(ctx).host().identity()) is None:
        return
    host = state.host
    try:
        pointer: Pointer | None = adapters(ctx).pointers().read(state.name)
    except PointerError:  # the binary there is then taken to be where it is here (a shared install)
        pointer = None
    there = pointer.binary if pointer is not None and pointer.host == host else binary()
    argv = list(ARGV) or list(words or [])
    forward_and_exit(settings(ctx).forwarding, host, there, argv, str(state.name))


def pointer_surveys(ctx: typer.Context) -> PointerSurveys:
    """Other hosts' jobs and damaged pointers, read from the index of pointers not settled."""
    return use_cases(ctx).pointer_surveys(shared=shared_location(ctx))


def damaged_pointer_line(problem: str) -> str:
    return f"{problem}; it is display only: remove it, and the job's next change writes a new one"


def owned_elsewhere(ctx: typer.Context, job: str, words: list[str]) -> None:
    """A job whose pointer names another host is committed there: this command re-runs itself there over
    SSH and exits as it did there (docs/forwarding.md). ``words``: the command, if the argv is not known."""
    from dunscaith.entrypoints.dunscaith.forwarding import route

    try:
        pointer = adapters(ctx).pointers().read(JobId(job))
    except PointerError:  # no pointer or an unreadable one: the record here decides
        return
    here = adapters(ctx).host().identity()
    # a pointer naming the shared store this command opens points here, whichever host wrote it; a
    # host-bound (SQLite) store is never opened just to ask, so another host's job opens nothing here
    if (pointer.root_host != here and settings(ctx).records.backend != "sqlite"
            and pointer.record_root == shared_location(ctx)):
        return
    route(pointer, here, settings(ctx).forwarding, job, words)


def notice_unattended(ctx: typer.Context, skip: str | None = None, survey: PointerSurvey | None = None) -> None:
    """The Unattended notice every job command prints while a job has work and no supervisor: this
    store's records not settled (an index) and their locks, and other hosts' jobs from the index of
    pointers not settled, whose damaged pointers it reports. ``survey``: those pointers, when the
    command read them already (and reported their damage)."""
    try:
        listed = use_cases(ctx).listing().unattended()  # the records not settled, by index, and their locks
        others = survey if survey is not None else pointer_surveys(ctx).unsettled()
    except Exception:  # a notice never stops the command it rides on
        return
    for job in listed:
        name = job.summary.job
        if name != skip:
            say(f"job {name} is Unattended ({job.summary.state}, no supervisor); "
                f"reattach with: {PROG} supervise {name}")
    for pointed in others.elsewhere:
        pointer = pointed.pointer
        if pointed.unattended and pointer.job != skip:
            say(f"job {pointer.job} on host {pointer.host} looks Unattended (its pointer: "
                f"{pointer.state}, no supervisor seen recently); reattach with: "
                f"{PROG} supervise {pointer.job} (it runs on {pointer.host})")
    for name, problem in others.damaged if survey is None else ():
        if name != skip:
            say(damaged_pointer_line(problem))


# --- pointers --------------------------------------------------------------------------------------------
def binary() -> str:
    script = Path(sys.executable).parent / PROG
    return str(script) if script.is_file() else os.path.abspath(sys.argv[0])


def new_pointer(ctx: typer.Context, state: JobState, store: JobStore) -> Pointer:
    host = store.identity().host or adapters(ctx).host().identity()
    return Pointer(job=state.name, host=host.hostname, record_root=store.location(), root_host=host,
                   binary=binary(), cluster=state.spec.cluster, adapter=state.spec.adapter, state="recorded",
                   state_at=state.recorded_at, supervised_at=None)


def current_pointer(ctx: typer.Context, state: JobState, store: JobStore) -> Pointer:
    """The job's pointer as written, or a new one when there is none to use."""
    try:
        return adapters(ctx).pointers().read(state.name)
    except PointerError:  # display only: no pointer, a damaged one, an unreadable home
        return new_pointer(ctx, state, store)


def pointer_notes(ctx: typer.Context, pointer: Pointer) -> PointerNotes:
    return use_cases(ctx).pointer_notes(pointer=pointer, on_problem=say)


# --- sweeps ----------------------------------------------------------------------------------------------
def _report(done: SweepReport) -> None:
    for line in render.sweep_lines(done):
        say(line)


def sweep(ctx: typer.Context) -> SweepReport | None:
    """One sweep of the whole residual list; its report printed. None when it could not run at all."""
    try:
        done = use_cases(ctx).sweep()()
    except Exception as exc:  # a sweep rides on a command and never stops it
        say(f"sweep not run: {reason(exc)}")
        return None
    _report(done)
    return done


def expire(ctx: typer.Context) -> SweepReport | None:
    """Drop expired entries only (no scheduler is asked), reporting each."""
    try:
        done = use_cases(ctx).sweep().expire()
    except Exception as exc:
        say(f"residual list not read: {reason(exc)}")
        return None
    _report(done)
    return done
