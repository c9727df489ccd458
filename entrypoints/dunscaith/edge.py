"""What every job command shares at the edge: the container, errors mapped to one line, notices, sweeps."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, Protocol, TypeVar, cast

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import Pointer
from dunscaith.domain.model.jobs.root_errors import RecordRootRefused
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.domain.model.shown import one_line, reason
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import render, routing
from dunscaith.entrypoints.dunscaith.install import own_binary
from dunscaith.entrypoints.dunscaith.root.kinds import records_shared
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import LockBusy, RecordDamaged, StoreError, UnknownJob

# The container is built by the root callback (app.py), never for `remote`: importing it here would put
# dependency-injector and pydantic on the start-up path of every wrapped process.
if TYPE_CHECKING:
    # types only: the supervision's use case (and its supervisor) is imported by the commands that supervise
    from dunscaith.domain.model.jobs.summary import UnattendedJob
    from dunscaith.domain.services.jobs.listing import JobListing
    from dunscaith.domain.services.jobs.owning_host import Owner, OwningHost
    from dunscaith.domain.services.jobs.pipeline_status import PipelineStanding
    from dunscaith.domain.services.jobs.pointer_survey import PointerSurvey, PointerSurveys
    from dunscaith.domain.services.jobs.status import JobStatus
    from dunscaith.domain.services.jobs.store_check import StoreCheck
    from dunscaith.domain.services.jobs.supervise_job import BoundElsewhere
    from dunscaith.domain.services.jobs.sweep import Sweep, SweepReport
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus
    from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings
    from dunscaith.entrypoints.dunscaith.root.settings_cache import HopSettings
    from dunscaith.entrypoints.dunscaith.root.wiring import AdapterMakers

PROG = "dunscaith"


class CommandContext(Protocol):
    """What a job command hands the functions here: typer's ``Context``, or a root context made by hand
    (``RootContext``), whose root holds the composition root (``obj``)."""

    def find_root(self) -> Any: ...


class Wired(Protocol):
    """The composition root a command resolves its parts through: ``wiring.Root`` (the console script's),
    or the dependency-injector ``container.Container`` a test hands the command (``obj=``); both are made
    from the one declaration, ``wiring.PARTS``."""

    adapters: Any
    use_cases: Any

    def settings(self) -> Any: ...

    def shutdown_resources(self) -> Any: ...


class RootContext:
    """A root context made by hand over a composition root (a test's): ``find_root().obj`` is that root,
    as typer's context holds the one a command made."""

    def __init__(self, root: Wired) -> None:
        self.obj = root

    def find_root(self) -> RootContext:
        return self


class At(NamedTuple):
    """What the shared helpers below are given by a command: its context (its composition root, for a
    forward and a followed record root) and the use cases they read, each a maker (made when first called).
    A typer command receives it as a parameter defaulting to ``AT`` (``@injected``); ``at_root`` makes it
    from a root made by hand. It is a ``CommandContext`` too (``find_root``)."""

    ctx: CommandContext
    store_check: Callable[[], StoreCheck]
    store_exists: Callable[[], bool]
    status: Callable[[], JobStatus]
    sweep_status: Callable[[], SweepStatus]
    listing: Callable[[], JobListing]
    owning_host: Callable[[], OwningHost]
    pointer_surveys: Callable[..., PointerSurveys]
    shared_location: Callable[[], Callable[[], str | None]]
    sweep: Callable[[], Sweep]

    def find_root(self) -> Any:
        return self.ctx.find_root()


def at_root(ctx: CommandContext, makers: Any) -> At:
    """``At`` over a composition root's use-case makers (``wiring.Root.use_cases``)."""
    return At(ctx, *(getattr(makers, name) for name in At._fields[1:]))


def say(line: str) -> None:
    print(f"{PROG}: {one_line(line)}", file=sys.stderr)


# --- the composition root --------------------------------------------------------------------------------
def container_of(ctx: CommandContext) -> Wired:
    """The command's composition root: the one a test gave (``run(obj=)``), else made now, once per command
    (so help and argument errors never pay for it), and shut down when the command ends."""
    root = ctx.find_root()
    if root.obj is None:
        from dunscaith.entrypoints.dunscaith.root.wiring import Root

        root.obj = Root(command_settings)  # read when a part first needs them
        root.call_on_close(root.obj.shutdown_resources)
    return cast("Wired", root.obj)


def command_settings() -> DunscaithSettings:
    """The settings a command's parts are made from: the validated tree, remembered, read as plain data
    without pydantic (``settings_cache.plain_settings``; validated now when anything changed). A store
    other than SQLite is opened from the tree read back by the model itself (``settings_tree``), as is
    what needs the model's own methods (``validated``)."""
    from dunscaith.entrypoints.dunscaith.root.settings_cache import plain_settings, settings_tree

    found = plain_settings()
    return found if found.records.backend == "sqlite" else settings_tree()


def validated(current: DunscaithSettings) -> DunscaithSettings:
    """``current`` as the pydantic model (``model_copy``, ``model_dump``): itself when it is one, else the
    same tree read back by the model (``settings_cache.settings_tree``)."""
    if hasattr(current, "model_dump"):
        return current
    from dunscaith.entrypoints.dunscaith.root.settings_cache import settings_tree

    return settings_tree()


# What a command is given: a parameter of a command ``injected`` wraps, keyword-only, defaulting to GIVEN,
# is handed the maker of the use case of its name (made when the command first calls it: a command that
# forwards, or is refused, before it needs its use case never opens the store for it).
GIVEN: Any = object()
# A parameter defaulting to AT is handed the command's ``At`` (the shared helpers' use cases, each a maker).
AT: Any = object()
F = TypeVar("F", bound=Callable[..., Any])


def injected(command: F) -> F:
    """A typer command given its use cases: each parameter defaulting to ``GIVEN`` is hidden from typer and
    handed, when the command runs, the maker of the use case of its name from the command's composition
    root (``ctx``: the command's first parameter, as typer passes it)."""
    import functools
    import inspect

    signature = inspect.signature(command)
    given = [name for name, parameter in signature.parameters.items() if parameter.default is GIVEN]
    at = [name for name, parameter in signature.parameters.items() if parameter.default is AT]

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        ctx = kwargs["ctx"] if "ctx" in kwargs else args[0]
        for name in given:
            kwargs[name] = _maker(ctx, name)
        for name in at:
            kwargs[name] = At(ctx, *(_maker(ctx, case) for case in At._fields[1:]))
        return command(*args, **kwargs)

    hidden = (GIVEN, AT)
    shown = signature.replace(
        parameters=[p for p in signature.parameters.values() if all(p.default is not h for h in hidden)])
    run.__signature__ = shown  # type: ignore[attr-defined]
    run.__annotations__ = {k: v for k, v in command.__annotations__.items() if k not in given and k not in at}
    return cast(F, run)


def _maker(ctx: CommandContext, name: str) -> Callable[..., Any]:
    return lambda **given: getattr(container_of(ctx).use_cases, name)(**given)


def adapters(ctx: CommandContext) -> AdapterMakers:
    return cast("AdapterMakers", container_of(ctx).adapters)


def settings(ctx: CommandContext) -> DunscaithSettings:
    return cast("DunscaithSettings", container_of(ctx).settings())


def interrupts(ctx: CommandContext) -> Interrupts:
    """Signals drain from the start of the command: one arriving before supervision starts stops it
    before any request goes out, with what is recorded kept."""
    return adapters(ctx).interrupts().install()


def end_by_signal(ctx: CommandContext) -> None:
    """After a drain: end the process by the signal that started it (the shell sees 128+n)."""
    adapters(ctx).interrupts().reraise()


# --- errors ----------------------------------------------------------------------------------------------
@contextmanager
def store_errors(at: At | None = None, job: str | None = None) -> Iterator[None]:
    """The store's refusals as one line each (BadInput); a job not recorded here is refused naming where it
    is (``at``: the command's, to look for it there), if anything says so."""
    try:
        yield
    except RecordRootRefused as exc:
        raise BadInput(str(exc)) from None
    except UnknownJob as exc:
        pointer = _pointer_elsewhere(at, job) if at is not None and job is not None else None
        if pointer is not None:
            raise BadInput(f"the record of job {job} is on host {pointer.host}, not here") from None
        moved = _pointer_moved(at, job) if at is not None and job is not None else None
        if moved is not None:
            raise BadInput(moved) from None
        sweep = _sweep_named(at, job) if at is not None and job is not None else None
        if sweep is not None:
            raise BadInput(sweep) from None
        raise BadInput(str(exc)) from None
    except LockBusy as exc:
        raise BadInput(f"{exc}: another supervisor (or command) is acting on it now") from None
    except RecordDamaged as exc:  # that job's damage only: nothing was done to it
        raise BadInput(f"the record of job {exc.job} does not read: {exc}; nothing was done to the job") from None
    except StoreError as exc:  # the store refused (damaged, not a store, locked too long, a server gone)
        raise BadInput(str(exc)) from None


def _pointer_elsewhere(at: At, job: str) -> Pointer | None:
    try:
        return pointer_surveys(at).elsewhere_of(JobId(job))
    except Exception:  # display only: the refusal names no host then
        return None


def _sweep_named(at: At, job: str) -> str | None:
    """A command that acts on one job (logs, events, watch...) given a sweep's or a pipeline's name: what to
    type instead."""
    try:
        elements = at.sweep_status().members(JobId(job))
        pipeline = None if elements else at.sweep_status().pipeline(JobId(job))
    except Exception:  # display only: the plain refusal then
        return None
    if pipeline is not None:
        one = next((s.job for s in reversed(pipeline.steps) if not s.is_sweep), pipeline.steps[-1].job)
        return (f"{job} is a pipeline of {len(pipeline.steps)} steps, not one job: name one step ({one}), or "
                f"see them all with: {PROG} status {job}")
    if not elements:
        return None
    return (f"{job} is a sweep of {len(elements)} elements, not one job: name one element ({elements[0].job}), "
            f"or see them all with: {PROG} status {job}")


def _pointer_moved(at: At, job: str) -> str | None:
    """The refusal naming where the job is recorded, when its pointer names another record root of this
    host (records.root changed since): issue 22 item 11."""
    try:
        here = at.store_check().location()
        pointer = pointer_surveys(at).moved_of(JobId(job), here)
    except Exception:  # display only: the plain refusal then
        return None
    if pointer is None:
        return None
    import shlex

    again = " ".join(shlex.quote(word) for word in [PROG, *(routing.ARGV or ["..."])])
    return (f"no job named {job} is recorded in {here}; its pointer says it is recorded in {pointer.record_root} "
            f"on this host (records.root has changed since): reach it there with "
            f"DUNSCAITH_RECORDS__ROOT={shlex.quote(pointer.record_root)} {again}")


def open_store(at: At) -> None:
    """The store, opened now: one that cannot be opened (a newer schema, not a store) refuses the command."""
    with store_errors():
        try:
            at.store_check()
        except StoreError as exc:
            raise BadInput(str(exc)) from None


def store_exists(at: At) -> bool:
    """Whether this host has a store to look in, asked without making one (``Adapters.store_exists``). A
    login node where nothing was ever recorded has none: nothing is recorded here, and a command that only
    looks a name up, or lists, finds nothing here without making one (the first command that opens it
    makes it). A records.root that could never hold one is refused here as opening it would refuse."""
    with store_errors():
        return at.store_exists()


def check_writable(at: At) -> None:
    """Before a command's first side effect outside the store (prune's residual entry): a store that would
    refuse its write refuses the command now, so nothing else is changed either."""
    with store_errors():
        problem = at.store_check().write_refused()
    if problem is not None:
        raise BadInput(problem)


def read_state(at: At, job: JobId, after: str = "; nothing was done to the job") -> JobState:
    """The job's state from this host's record (BadInput when it is not here or does not read)."""
    with store_errors(at, job):
        try:
            return at.status().one(job).state
        except (JobsError, RecordDamaged) as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}{after}") from None


# --- other hosts' jobs -----------------------------------------------------------------------------------
def shared_location(at: At) -> str | None:
    """Where the records are when the store is shared by login nodes (bound to no host), else None: a
    pointer naming it points here, whichever host wrote it."""
    return at.shared_location()()


def bound_elsewhere(at: At, state: JobState, words: list[str] | None = None) -> None:
    """A job whose objects live on another host (a local-scheduler job in a shared store): this command
    re-runs itself on that host over SSH and exits as it did there, exactly as for a pointer naming
    another host (docs/forwarding.md). ``words``: the command, if the argv is not known."""
    owner = at.owning_host().of_record(state)
    if owner is not None:
        _forward(at, owner, str(state.name), words or [])


def forward_bound(ctx: CommandContext, elsewhere: BoundElsewhere, words: list[str]) -> NoReturn:
    """``bound_elsewhere``'s forward, when the use case found the job bound to another host."""
    _forward(ctx, elsewhere.owner, str(elsewhere.state.name), words)


def pointer_surveys(at: At) -> PointerSurveys:
    """Other hosts' jobs and damaged pointers, read from the index of pointers not settled."""
    return at.pointer_surveys(shared=shared_location(at))


def damaged_pointer_line(problem: str) -> str:
    return f"{problem}; it is display only: remove it, and the job's next change writes a new one"


def owned_elsewhere(at: At, job: str, words: list[str], *, follow: bool = False,
                    sweeps: bool = False) -> None:
    """A job whose pointer names another host is committed there: this command re-runs itself there over
    SSH and exits as it did there (docs/forwarding.md). ``words``: the command, if the argv is not known.
    ``follow`` (only before the store is opened): a pointer naming another record root of this host, still
    bound to it, is followed there. ``sweeps`` (before the store is opened, for a command that takes a
    sweep's NAME): where this host has no store, nothing of that name is recorded here, so a sweep whose
    elements' pointers name another host is found now, before a store would be made
    (``sweep_owned_elsewhere``, which the command asks again if the store here has nothing of the name)."""
    if follow:
        pointer = at.owning_host().earlier_root(JobId(job))
        if pointer is not None:
            _follow_root(at, pointer)
            return
    owner = at.owning_host().of_pointer(JobId(job))
    if owner is not None:
        _forward(at, owner, job, words)
    if sweeps and not store_exists(at):
        sweep_owned_elsewhere(at, job, words)


def sweep_owned_elsewhere(at: At, sweep: str, words: list[str]) -> None:
    """Nothing named ``sweep`` is recorded here, but pointers of its elements (``NAME-7``) name another
    host: this command re-runs itself there, as for one of its elements (docs/sweeps.md). Else a
    pipeline's: pointers of its steps' jobs (``NAME.STEP``, ``NAME.STEP-7``) naming another host."""
    try:
        hosts = at.owning_host()
        found = hosts.of_sweep(JobId(sweep))
        whose = "its elements'"
        if found is None:
            found, whose = hosts.of_pipeline(JobId(sweep)), "its pipeline's jobs'"
    except Exception:  # pointers are display and routing only: the refusal here stands
        return
    if found is not None:
        owner, element = found
        say(f"no job named {sweep} is recorded here; {whose} pointers (such as {element}'s) name host "
            f"{owner.host}: the command runs there")
        _forward(at, owner, sweep, words)


def _forward(ctx: CommandContext, owner: Owner, job: str, words: Sequence[str]) -> NoReturn:
    argv = list(routing.ARGV) or list(words)  # the user's own words, exactly as typed
    forward_and_exit(settings(ctx).forwarding, owner.host, owner.binary or own_binary(), argv, job)


def forward_and_exit(section: HopSettings, host: str, binary: str, argv: Sequence[str], job: str) -> NoReturn:
    """Run ``argv`` (the user's own words, exactly as typed) on ``host``, the job's owning host, and exit
    as it did there."""
    import typer  # the forward is a hop over SSH: typer's import is nothing beside it

    raise typer.Exit(routing.forward(section, host, binary, argv, job))


def _follow_root(ctx: CommandContext, pointer: Pointer) -> None:
    """The job's pointer names a record root of this host other than records.root (changed since the job
    was recorded): this command uses that root, records and objects alike, if its HOST file still binds it
    to this host (issue 22 item 11). Else records.root decides, and the refusal names the pointer's root."""
    current = settings(ctx)
    records = current.records
    root = root_to_follow(pointer, records.root, records.backend)
    if root is None:
        return
    current = validated(current)
    moved = current.model_copy(update={"records": records.model_copy(update={"root": root})})
    _use_settings(container_of(ctx), moved)
    say(f"job {pointer.job} is recorded in {root} on this host (its pointer says so), not in records.root "
        f"{records.root}: that root is used for this command")


def _use_settings(wired: Wired, moved: DunscaithSettings) -> None:
    """The command's parts are made from ``moved`` from now on."""
    from dunscaith.entrypoints.dunscaith.root.wiring import Root

    if isinstance(wired, Root):
        wired.use_settings(moved)
        return
    from dependency_injector import providers  # a test's container

    cast(Any, wired).settings.override(providers.Object(moved))


def root_to_follow(pointer: Pointer, records_root: Path, backend: str) -> Path | None:
    """The record root of this host ``pointer`` names, when it is not records.root: the one this command
    uses instead (``_follow_root``); None when records.root is the one."""
    root = Path(pointer.record_root)
    # only a host's own store lives in a root of this host (a shared store is one place for every login node)
    if records_shared(backend) or not root.is_absolute() or root == Path(os.path.abspath(records_root)):
        return None
    return root


def notice_unattended(at: At, skip: str | None = None, survey: PointerSurvey | None = None,
                      pipelines: Mapping[JobId, PipelineStanding] | None = None) -> None:
    """The Unattended notice every job command prints while a job has work and no supervisor: this
    store's records not settled (an index) and their locks, and other hosts' jobs from the index of
    pointers not settled, whose damaged pointers it reports. ``survey``: those pointers, when the
    command read them already (and reported their damage); ``pipelines``: the pipelines whose standing
    it read already, by name (counted from it, not read again)."""
    try:
        # the records not settled, by index, and their locks (no store here: none, and none made)
        listed = at.listing().unattended() if store_exists(at) else []
        others = survey if survey is not None else pointer_surveys(at).unsettled()
        # a pipeline's jobs are one line, naming it, counted as status NAME counts them (none while its
        # supervisor lives: it holds back its waiting steps with no lock of theirs; never a blocked one)
        of, counts = at.listing().pipelines_of(listed, pipelines) if listed else ({}, {})
    except Exception:  # a notice never stops the command it rides on
        return
    listed = [u for u in listed if u.job not in of]
    # written at once: 10,000 Unattended jobs are one write, not 10,000
    told = [*_unattended_here(listed, skip), *_unattended_elsewhere(others, skip)]
    told += [f"pipeline {name}: {count} job{'s are' if count != 1 else ' is'} Unattended (no supervisor); "
             f"reattach with: {PROG} supervise {name}" for name, count in counts.items() if count and name != skip]
    for name, problem in others.damaged if survey is None else ():
        if name != skip:
            told.append(damaged_pointer_line(problem))
    if told:  # stderr is line-buffered: flushed as say's prints are
        sys.stderr.write("".join(f"{PROG}: {one_line(line)}\n" for line in told))


def _unattended_here(listed: Sequence[UnattendedJob], skip: str | None) -> list[str]:
    """This store's Unattended jobs, one line each; a sweep's Unattended elements are one line, naming the
    sweep."""
    told: list[str] = []
    sweeps: dict[str, int] = {}
    for name, state, sweep in listed:
        if sweep is not None:
            if sweep != skip and name != skip:
                sweeps[sweep] = sweeps.get(sweep, 0) + 1
        elif name != skip:
            told.append(f"job {name} is Unattended ({state}, no supervisor); "
                        f"reattach with: {PROG} supervise {name}")
    for whole, count in sweeps.items():
        told.append(f"sweep {whole}: {count} element{'s are' if count != 1 else ' is'} Unattended "
                    f"(no supervisor); reattach with: {PROG} supervise {whole}")
    return told


def _unattended_elsewhere(others: PointerSurvey, skip: str | None) -> list[str]:
    """Other hosts' jobs that look Unattended by their pointers; another host's sweep is one line too (its
    elements' pointers name it), naming the host it runs on."""
    from dunscaith.domain.services.jobs.pointer_survey import PointedJob, by_sweep  # loaded: others was read

    told: list[str] = []
    alone = [p for p in others.elsewhere
             if p.unattended and (skip is None or skip not in (p.pointer.job, p.pointer.sweep))]
    for row in by_sweep(alone):
        if isinstance(row, PointedJob):
            pointer = row.pointer
            told.append(f"job {pointer.job} on host {pointer.host} looks Unattended (its pointer: "
                        f"{pointer.state}, no supervisor seen recently); reattach with: "
                        f"{PROG} supervise {pointer.job} (it runs on {pointer.host})")
        else:
            count = len(row.elements)
            told.append(f"sweep {row.sweep} on host {row.host}: {count} "
                        f"element{'s look' if count != 1 else ' looks'} Unattended (their pointers: no supervisor "
                        f"seen recently); reattach with: {PROG} supervise {row.sweep} (it runs on {row.host})")
    return told


# --- sweeps ----------------------------------------------------------------------------------------------
def report_sweep(done: SweepReport) -> None:
    for line in render.sweep_lines(done):
        say(line)


def sweep(at: At) -> SweepReport | None:
    """One sweep of the whole residual list; its report printed. None when it could not run at all."""
    try:
        done = at.sweep()()
    except Exception as exc:  # a sweep rides on a command and never stops it
        say(f"sweep not run: {reason(exc)}")
        return None
    report_sweep(done)
    return done


def expire(at: At) -> SweepReport | None:
    """Drop expired entries only (no scheduler is asked), reporting each."""
    try:
        done = at.sweep().expire()
    except Exception as exc:
        say(f"residual list not read: {reason(exc)}")
        return None
    report_sweep(done)
    return done
