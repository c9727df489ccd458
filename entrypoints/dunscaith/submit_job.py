"""``dunscaith submit``'s body: the typer command (``commands/submit.py``) declares the arguments and calls
it with the use cases it is given."""

from __future__ import annotations

import os
import secrets
import stat
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import name_problem
from dunscaith.domain.model.jobs.notices import chosen_kinds
from dunscaith.domain.model.jobs.pointer import PointerError
from dunscaith.domain.model.jobs.recovery_settings import Recovery, SignalBefore
from dunscaith.domain.model.jobs.resources import (
    Resources,
    parse_count,
    parse_gpus,
    parse_memory,
    parse_text,
    parse_time_limit,
)
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec, submission_problem
from dunscaith.domain.model.jobs.sweeps import (
    MAX_ELEMENTS,
    NameTaken,
    SweepPlan,
    element_specs,
    parse_array,
    parse_each,
)
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind, not_here_problem, same_indices_problem
from dunscaith.domain.services.jobs.submit import check_name
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, recovery_rules, supervision
from dunscaith.entrypoints.dunscaith.edge import At, CommandContext
from dunscaith.ports.job_store import JobExists

if TYPE_CHECKING:
    from dunscaith.domain.services.jobs.owning_host import OwningHost
    from dunscaith.domain.services.jobs.submit import RecordJob, RecordSweep
    from dunscaith.entrypoints.dunscaith.supervision import Supervising
    from dunscaith.ports.interrupts import Interrupts



class Submitting(NamedTuple):
    """The use cases ``submit``'s body is given (each a maker: ``@edge.injected`` hands the typer command
    its use cases): recording a job or a sweep, the pointers' hosts for a
    refusal's hint, and the supervision that follows."""

    record_job: Callable[[], RecordJob]
    record_sweep: Callable[[], RecordSweep]
    owning_host: Callable[[], OwningHost]
    supervising: Supervising


FLAG_OF = {DependencyKind.AFTER: "--after", DependencyKind.AFTER_ANY: "--after-any",
           DependencyKind.AFTER_EACH: "--after-each"}


def submit(at: At, cases: Submitting, words: list[str], *, as_command: bool, cluster: str = "local",
           name: str | None = None, follow: bool = False, partition: str | None = None, time: str | None = None,
           mem: str | None = None, cpus: str | None = None, gpus: str | None = None, account: str | None = None,
           qos: str | None = None, export: str | None = None, sbatch: tuple[str, ...] = (),
           env: tuple[str, ...] = (), chdir: str | None = None, as_json: bool = False, parsable: bool = False,
           array: str | None = None, each: Path | None = None, max_running: str | None = None,
           job_exit: bool | None = None, recovery_flags: tuple[str | None, ...] = (None, None, None, None),
           notify: bool | None = None, after: tuple[str, ...] = (), after_any: tuple[str, ...] = (),
           after_each: tuple[str, ...] = ()) -> int:
    """``submit``'s body (its help: commands/submit.py). ``as_command``: the words came after ``--``."""
    drain = edge.interrupts(at)
    sweeping = array is not None or each is not None
    _options_together(as_json=as_json, parsable=parsable, array=array, each=each, max_running=max_running,
                      name=name, job_exit=job_exit, follow=follow)
    waits = _waits(after, after_any, after_each, sweeping=sweeping)
    edge.settings(at).cluster(cluster)  # an unknown cluster: one line, before anything else is read
    try:
        needs = resources({"--partition": partition, "--time": time, "--mem": mem, "--cpus-per-task": cpus,
                           "--gpus": gpus, "--account": account, "--qos": qos}, export)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    spec = job_spec(at, words, as_command, name, cluster, chdir, needs, sbatch, env, recovery_flags, notify)
    if sweeping:
        elements = [replace(e, waits=waits) for e in _sweep(spec, array, each, max_running)]
        return _submit_sweep(at, cases, drain, spec, elements, as_json=as_json, parsable=parsable,
                             job_exit=exit_of_job(at, job_exit))
    job = _record_job(at, cases, replace(spec, waits=waits))
    if parsable:  # as sbatch --parsable: the name alone, at once, for a script to keep
        print(job, flush=True)
    return supervision.supervise(at, job, drain, cases.supervising.job(), fresh=True, follow=follow, as_json=as_json,
                                 stream=sys.stderr if parsable else None, job_exit=exit_of_job(at, job_exit))


def _options_together(*, as_json: bool, parsable: bool, array: str | None, each: Path | None,
                      max_running: str | None, name: str | None, job_exit: bool | None, follow: bool) -> None:
    """The options that cannot go together, or that one needs another: refused before anything is read."""
    sweeping = array is not None or each is not None
    if as_json and parsable:
        raise BadInput("give --json or --parsable, not both: each is what stdout holds")
    if array is not None and each is not None:
        raise BadInput("give --array or --each, not both: either one describes the sweep's elements")
    if not sweeping and max_running is not None:
        raise BadInput("--max-running is for a sweep: give --array or --each with it")
    if sweeping and name is None:
        raise BadInput("a sweep needs --name NAME: its elements are the jobs NAME-INDEX")
    if sweeping and job_exit:
        raise BadInput("--job-exit-code is one job's code, and a sweep has many: a sweep's code is dunscaith's "
                       "(docs/sweeps.md); drop it, or read each element's with dunscaith status NAME --json")
    if sweeping and follow:
        raise BadInput("--follow shows one job's output, not a sweep's: follow an element with "
                       "dunscaith logs NAME-INDEX --follow")


def _waits(after: tuple[str, ...], after_any: tuple[str, ...], after_each: tuple[str, ...], *,
           sweeping: bool) -> tuple[Dependency, ...]:
    """What the job (every element of a sweep) waits for, from --after, --after-any and --after-each, in
    that order; one line for a name given twice, or --after-each on a job."""
    if after_each and not sweeping:
        raise BadInput(f"--after-each {after_each[0]}: only a sweep (--array or --each) waits element by element "
                       f"(element i for element i of {after_each[0]}); for one job, use --after {after_each[0]}")
    waits: list[Dependency] = []
    for kind, names in ((DependencyKind.AFTER, after), (DependencyKind.AFTER_ANY, after_any),
                        (DependencyKind.AFTER_EACH, after_each)):
        for given in names:
            problem = name_problem(FLAG_OF[kind], given)
            if problem is not None:
                raise BadInput(problem)
            twice = next((w for w in waits if w.on == given), None)
            if twice is not None:
                same = "twice" if twice.kind is kind else f"with {FLAG_OF[twice.kind]} too"
                raise BadInput(f"{FLAG_OF[kind]} {given}: given {same}; a job waits for another one way only")
            waits.append(Dependency(JobId(given), kind))
    return tuple(waits)


def check_waits(owning_host: Callable[[], OwningHost], record: RecordJob | RecordSweep, name: JobId,
                waits: tuple[Dependency, ...], indices: set[int] | None = None) -> None:
    """Refuse, before anything is recorded, a job (``name``; a sweep's: ``indices``) that waits for itself,
    for a name this store holds nothing of, or (--after-each) for a job or a sweep of other indices."""
    for dep in waits:
        flag = f"{FLAG_OF[dep.kind]} {dep.on}"
        if dep.on == name:
            raise BadInput(f"{flag}: {name} would wait for itself, and so never start")
        with edge.store_errors():
            found = record.waited(dep.on)
        if found is None:
            raise BadInput(not_here_problem(FLAG_OF[dep.kind], dep.on, _pointer_host(owning_host, dep.on)))
        if dep.kind is DependencyKind.AFTER_EACH:
            if found.indices is None:
                raise BadInput(f"{flag}: a job, not a sweep: it has no element i for element i to wait for; "
                               f"use --after {dep.on}")
            problem = same_indices_problem(name, dep.on, indices or set(), set(found.indices))
            if problem is not None:
                raise BadInput(f"{flag}: {problem}")


def _pointer_host(owning_host: Callable[[], OwningHost], name: JobId) -> str | None:
    """The host a pointer of the user's says ``name`` (a job, or a sweep's elements) is recorded on, if
    another: display only, so a pointer that does not read says nothing."""
    try:
        owning = owning_host()
        owner = owning.of_pointer(name)
        if owner is None:
            found = owning.of_sweep(name)
            owner = found[0] if found is not None else None
    except Exception:  # pointers are display and routing only: the refusal stands without the hint
        return None
    return owner.host if owner is not None else None


def _record_job(at: At, cases: Submitting, spec: JobSpec) -> JobId:
    """The job recorded, once every check that can refuse it has passed: nothing is recorded otherwise."""
    edge.open_store(at)
    record = cases.record_job()
    with edge.store_errors():  # the cluster's scheduler opens (its folders checked) before the job is recorded
        refused = record.ready(spec.cluster, spec.resources, spec.options)
    if refused is not None:  # what the cluster's scheduler cannot honour, refused before anything is recorded
        raise BadInput(refused)
    check_waits(cases.owning_host, record, spec.name, spec.waits)
    try:  # a job without a pointer is one no other login node can find: refused before it is recorded
        record.pointers_writable()
    except PointerError as exc:
        raise BadInput(f"{exc}; nothing was recorded: every login node finds a job by its pointer there, so "
                       "fix that folder, then submit again") from None
    try:
        record.check_free(spec.name)
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    edge.notice_unattended(at)
    try:
        return record(spec)
    except JobExists:
        raise BadInput(f"a job named {spec.name} is already recorded; choose another --name") from None
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None


def _submit_sweep(at: At, cases: Submitting, drain: Interrupts, template: JobSpec,
                  elements: list[JobSpec], *, as_json: bool, parsable: bool, job_exit: bool) -> int:
    """Record every element of the sweep ``template`` names, at once or not at all, then supervise them."""
    from dunscaith.entrypoints.dunscaith import sweep_supervision

    edge.open_store(at)
    record = cases.record_sweep()
    with edge.store_errors():  # asked once: every element has the same cluster, needs and options
        refused = record.ready(template.cluster, template.resources, template.options)
    if refused is not None:
        raise BadInput(refused)
    if elements:
        check_waits(cases.owning_host, record, template.name, elements[0].waits,
                    {e.member.index for e in elements if e.member is not None})
    try:
        record.pointers_writable()
    except PointerError as exc:
        raise BadInput(f"{exc}; nothing was recorded: every login node finds a job by its pointer there, so "
                       "fix that folder, then submit again") from None
    try:
        record.check_free(template.name, [element.name for element in elements])
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    edge.notice_unattended(at)
    try:
        record(template.name, elements)
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    if parsable:  # the sweep's name alone, once every element is recorded, for a script to keep
        print(template.name, flush=True)
    return sweep_supervision.supervise_sweep(at, template.name, drain, cases.supervising, fresh=True, as_json=as_json,
                                             stream=sys.stderr if parsable else None, job_exit=job_exit)


def exit_of_job(ctx: CommandContext, given: bool | None) -> bool:
    """--job-exit-code / --dunscaith-exit-code, else supervise.exit_code."""
    return given if given is not None else edge.settings(ctx).supervise.exit_code == "job"


def default_name(words: list[str]) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in Path(words[0]).name)[:24].strip("-._")
    return f"{stem or 'job'}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def resources(given: dict[str, str | None], export: str | None) -> Resources:
    """The job's needs from submit's flags, each checked as the domain reads it (one line naming the flag)."""
    def text(flag: str) -> str | None:
        value = given[flag]
        return None if value is None else parse_text(value, flag)

    gpus = given["--gpus"]
    count, kind = parse_gpus(gpus, "--gpus") if gpus is not None else (None, None)
    return Resources(
        cpus=parse_count(c, "--cpus-per-task") if (c := given["--cpus-per-task"]) is not None else None,
        memory_mb=parse_memory(m, "--mem") if (m := given["--mem"]) is not None else None,
        time_limit_s=parse_time_limit(t, "--time") if (t := given["--time"]) is not None else None,
        gpus=count, gpu_type=kind, queue=text("--partition"), account=text("--account"), qos=text("--qos"),
        export=parse_text(export, "--export") if export is not None else None)


def job_spec(ctx: CommandContext, words: list[str], as_command: bool, name: str | None, cluster_name: str,
             chdir: str | None, needs: Resources, options: tuple[str, ...], env: tuple[str, ...],
             recovery_flags: tuple[str | None, ...] = (None, None, None, None),
             notify: bool | None = None) -> JobSpec:
    settings = edge.settings(ctx)
    if notify and not settings.notify.command:
        raise BadInput("--notify: no notify.command is configured, so there is nothing to tell "
                       "(docs/notifications.md)")
    if not words:
        raise BadInput("nothing to run: give a command after -- (submit -- sh -c 'echo hi') or a script")
    script: str | None = None
    command: tuple[str, ...] = ()
    if as_command:
        command = tuple(words)
    else:
        if len(words) != 1:
            raise BadInput("give one SCRIPT, or put the command after -- (submit -- COMMAND ARGS...)")
        if words[0] == "":  # Path("") is ".", which would be read as "script .: Is a directory"
            raise BadInput(f"SCRIPT {_empty()}")
        script = _script_text(words[0])
    if chdir == "":  # abspath("") is the current directory: an unset variable must not mean "here"
        raise BadInput(f"--chdir {_empty()}")
    try:
        workdir = os.path.abspath(chdir) if chdir is not None else os.getcwd()
    except FileNotFoundError:
        raise BadInput("the current directory no longer exists (removed after you entered it), and a job runs "
                       "where submit runs: cd to a directory that exists, or give --chdir") from None
    if chdir is not None and not os.path.isdir(workdir):
        raise BadInput(f"--chdir {chdir}: no such directory")
    recovery, signal_before, notices = cluster_defaults(ctx, cluster_name, recovery_flags, notify)
    try:
        job = check_name(name if name is not None else default_name(words))
        spec = JobSpec(job, cluster_name, settings.cluster(cluster_name).adapter, command, script, workdir,
                       settings.recovery.attempts, options, env, needs, recovery=recovery,
                       signal_before=signal_before, notify=notices)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    problem = submission_problem(spec)
    if problem is not None:
        raise BadInput(f"script {words[0]}: {problem}" if script is not None and not script.strip() else problem)
    return spec


def cluster_defaults(ctx: CommandContext, cluster: str,
                     recovery_flags: tuple[str | None, ...] = (None, None, None, None),
                     notify: bool | None = None) -> tuple[Recovery, SignalBefore | None, tuple[str, ...]]:
    """What every job submitted to ``cluster`` takes from the settings, with submit's flags over them: the
    opt-in recovery (the cluster's settings, then the flags: recovery_rules.py), the signal before the time
    limit, and what notify.command is told."""
    settings = edge.settings(ctx)
    recovery, signal_before = recovery_rules.of_flags(recovery_rules.recovery_for(settings, cluster),
                                                      *recovery_flags)
    return recovery, signal_before, chosen_kinds(settings.notify.on, bool(settings.notify.command), notify)


def _empty() -> str:
    from dunscaith.entrypoints.path_args import EMPTY  # imports typer: only for this refusal

    return EMPTY


SCRIPT_LIMIT = 4 * 1024 * 1024  # bytes of a SCRIPT at most: Slurm's own default (max_script_size), far above a script


def _script_text(given: str) -> str:
    """A SCRIPT's text: a regular file only (a FIFO, a device or a folder is refused, never waited on or read
    without end), at most SCRIPT_LIMIT bytes of UTF-8."""
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to returns at once, and fstat then refuses it
        fd = os.open(given, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise BadInput(f"script {given}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a pipe, a device...)"
        raise BadInput(f"script {given}: {what}; give a script file, or the command after --")
    with os.fdopen(fd, "rb") as file:
        os.set_blocking(fd, True)
        try:
            data = file.read(SCRIPT_LIMIT + 1)
        except OSError as exc:
            raise BadInput(f"script {given}: {exc.strerror or exc}") from None
    if len(data) > SCRIPT_LIMIT:
        raise BadInput(f"script {given}: larger than {SCRIPT_LIMIT // (1024 * 1024)} MiB, more than a script can be "
                       "(Slurm's own default limit); is it the script you meant?")
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        raise BadInput(f"script {given}: not UTF-8 text (byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as a text read gives it (universal newlines)


_EACH_LIMIT = 16 * 1024 * 1024  # bytes of an --each file read at most (10,000 lines of arguments fit many times)


def _each_text(path: Path) -> str:
    try:
        with path.open("rb") as file:
            data = file.read(_EACH_LIMIT + 1)
    except OSError as exc:
        raise BadInput(f"--each {path}: {exc.strerror or exc}") from None
    if len(data) > _EACH_LIMIT:
        raise BadInput(f"--each {path}: larger than {_EACH_LIMIT // (1024 * 1024)} MiB; a sweep has at most "
                       f"{MAX_ELEMENTS:,} elements, one a line")
    try:
        return data.decode()
    except UnicodeDecodeError as exc:
        raise BadInput(f"--each {path}: not UTF-8 text (byte {exc.start})") from None


def _sweep(template: JobSpec, array: str | None, each: Path | None, max_running: str | None) -> list[JobSpec]:
    """Every element's spec of the sweep ``template`` names (submit --array/--each): one line for bad input."""
    try:
        if array is not None:
            elements, source = parse_array(array), "--array"
        else:
            source = f"--each {each}"
            elements = parse_each(_each_text(each), source) if each is not None else ()
        most = parse_count(max_running, "--max-running", MAX_ELEMENTS) if max_running is not None else None
        return list(element_specs(template, SweepPlan(template.name, elements, most, source)))
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
