"""``dunscaith submit / supervise``: record a job and supervise it, or reattach a supervisor."""

from __future__ import annotations

import os
import secrets
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import PointerError
from dunscaith.domain.model.jobs.resources import (
    Resources,
    parse_count,
    parse_gpus,
    parse_memory,
    parse_text,
    parse_time_limit,
)
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.sweeps import (
    MAX_ELEMENTS,
    NameTaken,
    SweepPlan,
    element_specs,
    parse_array,
    parse_each,
)
from dunscaith.domain.services.jobs.submit import check_name
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, supervision, sweep_supervision
from dunscaith.entrypoints.path_args import EMPTY, path_arg
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.job_store import JobExists

if TYPE_CHECKING:
    from typer._click.core import Context as ParsingContext  # what typer's own click passes to parse_args

_AS_COMMAND = "dunscaith.as_command"


class _WordsCommand(TyperCommand):
    """Notes whether the words were given after ``--``: only that tells a COMMAND from a SCRIPT, and
    parsing drops it."""

    def parse_args(self, ctx: ParsingContext, args: list[str]) -> list[str]:
        ctx.meta[_AS_COMMAND] = "--" in args
        return super().parse_args(ctx, args)


def _default_name(words: list[str]) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in Path(words[0]).name)[:24].strip("-._")
    return f"{stem or 'job'}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _resources(given: dict[str, str | None], export: str | None) -> Resources:
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


def _spec(ctx: typer.Context, words: list[str], name: str | None, cluster_name: str, chdir: str | None,
          resources: Resources, options: tuple[str, ...], env: tuple[str, ...]) -> JobSpec:
    settings = edge.settings(ctx)
    if not words:
        raise BadInput("nothing to run: give a command after -- (submit -- sh -c 'echo hi') or a script")
    script: str | None = None
    command: tuple[str, ...] = ()
    if ctx.meta.get(_AS_COMMAND, False):
        command = tuple(words)
    else:
        if len(words) != 1:
            raise BadInput("give one SCRIPT, or put the command after -- (submit -- COMMAND ARGS...)")
        if words[0] == "":  # Path("") is ".", which would be read as "script .: Is a directory"
            raise BadInput(f"SCRIPT {EMPTY}")
        try:
            script = Path(words[0]).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"script {words[0]}: {getattr(exc, 'strerror', None) or exc}") from None
    if chdir == "":  # abspath("") is the current directory: an unset variable must not mean "here"
        raise BadInput(f"--chdir {EMPTY}")
    try:
        workdir = os.path.abspath(chdir) if chdir is not None else os.getcwd()
    except FileNotFoundError:
        raise BadInput("the current directory no longer exists (removed after you entered it), and a job runs "
                       "where submit runs: cd to a directory that exists, or give --chdir") from None
    if chdir is not None and not os.path.isdir(workdir):
        raise BadInput(f"--chdir {chdir}: no such directory")
    try:
        job = check_name(name if name is not None else _default_name(words))
        return JobSpec(job, cluster_name, settings.cluster(cluster_name).adapter, command, script, workdir,
                       settings.recovery.attempts, options, env, resources)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None


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


def _exit_option() -> Any:
    return typer.Option(None, "--job-exit-code/--dunscaith-exit-code",
                        help="once the job has its outcome, exit with the job's own exit code (128+n for a signal "
                             "n), as srun does; default: supervise.exit_code (docs/exit-codes.md)")


def _job_exit(ctx: typer.Context, given: bool | None) -> bool:
    return given if given is not None else edge.settings(ctx).supervise.exit_code == "job"


def submit(
    ctx: typer.Context,
    words: list[str] = typer.Argument(None, metavar="-- COMMAND... | SCRIPT", show_default=False),
    cluster: str = typer.Option("local", "--cluster", metavar="NAME", help="a [clusters.NAME] of the configuration"),
    name: str | None = typer.Option(None, "--name", metavar="NAME", help="the job's name (default: from the command)"),
    follow: bool = typer.Option(False, "--follow", "-f", help="show the job's stdout and stderr while it runs"),
    partition: str | None = typer.Option(None, "--partition", "-p", metavar="NAME",
                                         help="the queue (Slurm: --partition)"),
    time: str | None = typer.Option(None, "--time", "-t", metavar="LIMIT",
                                    help="the time limit: MINUTES, MM:SS, HH:MM:SS, D-HH[:MM[:SS]] (30, 1-00:00:00)"),
    mem: str | None = typer.Option(None, "--mem", metavar="SIZE",
                                   help="the job's memory (4G, 512M; a bare number is M)"),
    cpus: str | None = typer.Option(None, "--cpus-per-task", "-c", metavar="N",
                                    help="cpus for the job (Slurm: --cpus-per-task)"),
    gpus: str | None = typer.Option(None, "--gpus", metavar="[TYPE:]N", help="gpus (2, a100:2)"),
    account: str | None = typer.Option(None, "--account", "-A", metavar="NAME",
                                       help="the account charged (Slurm: --account)"),
    qos: str | None = typer.Option(None, "--qos", metavar="NAME", help="the quality of service (Slurm: --qos)"),
    export: str | None = typer.Option(None, "--export", metavar="WHAT",
                                      help="which of your environment the job sees (Slurm: --export; ALL, NONE, "
                                           "NAME,...)"),
    sbatch: list[str] = typer.Option([], "--sbatch", metavar="ARG",
                                     help="one of the Slurm scheduler's own options, as --sbatch=--constraint=a100 "
                                          "(repeatable)"),
    env: list[str] = typer.Option([], "--env", metavar="NAME=VALUE",
                                  help="set a variable in the job's environment (repeatable; local and Slurm)"),
    chdir: str | None = typer.Option(None, "--chdir", metavar="DIR",
                                     help="the job's working directory (default: this one; local and Slurm)"),
    as_json: bool = typer.Option(False, "--json",
                                 help="when the job ends, one JSON object on stdout (docs/json.md); the live view "
                                      "on stderr"),
    parsable: bool = typer.Option(False, "--parsable",
                                  help="print the job's name on stdout once it is recorded (a sweep's NAME once "
                                       "every element is); the live view on stderr"),
    array: str | None = typer.Option(None, "--array", metavar="START-END[:STEP]",
                                     help="a sweep: one element per index (0-99, 1-99:2, 7, 0-9,20), each job "
                                          "NAME-INDEX; {} in the command is the index (docs/sweeps.md)"),
    each: Path | None = typer.Option(None, "--each", metavar="FILE", parser=path_arg,
                                     help="a sweep: one element per line of FILE, its plain arguments appended to "
                                          "the command, or its key=value pairs filling in {key} (docs/sweeps.md)"),
    max_running: str | None = typer.Option(None, "--max-running", metavar="N",
                                           help="a sweep: at most N of its elements run at once"),
    job_exit: bool | None = _exit_option(),
) -> int:
    """Record a job, submit it held, release it once it is confirmed, and supervise it to its outcome.

    The job runs on the local scheduler (this machine, which honours --cpus-per-task, --mem and --time)
    unless --cluster names another cluster; what its scheduler cannot honour is refused before anything
    is recorded. The supervisor stays in the foreground: a signal stops the supervisor, never the job.

    With --array or --each, a sweep: --name NAME's elements NAME-INDEX, each a job with every flag given
    here, all recorded at once (or none), then supervised by this one process."""
    drain = edge.interrupts(ctx)
    if as_json and parsable:
        raise BadInput("give --json or --parsable, not both: each is what stdout holds")
    sweeping = array is not None or each is not None
    if array is not None and each is not None:
        raise BadInput("give --array or --each, not both: either one describes the sweep's elements")
    if not sweeping and max_running is not None:
        raise BadInput("--max-running is for a sweep: give --array or --each with it")
    if sweeping and name is None:
        raise BadInput("a sweep needs --name NAME: its elements are the jobs NAME-INDEX")
    if sweeping and follow:
        raise BadInput("--follow shows one job's output, not a sweep's: follow an element with "
                       "dunscaith logs NAME-INDEX --follow")
    edge.settings(ctx).cluster(cluster)  # an unknown cluster: one line, before anything else is read
    try:
        resources = _resources({"--partition": partition, "--time": time, "--mem": mem, "--cpus-per-task": cpus,
                                "--gpus": gpus, "--account": account, "--qos": qos}, export)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    spec = _spec(ctx, words or [], name, cluster, chdir, resources, tuple(sbatch), tuple(env))
    if sweeping:
        return _submit_sweep(ctx, drain, spec, _sweep(spec, array, each, max_running), as_json=as_json,
                             parsable=parsable, job_exit=_job_exit(ctx, job_exit))
    edge.open_store(ctx)
    with edge.store_errors():  # the cluster's scheduler opens (its folders checked) before the job is recorded
        refused = edge.use_cases(ctx).record_job().ready(cluster, spec.resources, spec.options)
    if refused is not None:  # what the cluster's scheduler cannot honour, refused before anything is recorded
        raise BadInput(refused)
    try:  # a job without a pointer is one no other login node can find: refused before it is recorded
        edge.use_cases(ctx).record_job().pointers_writable()
    except PointerError as exc:
        raise BadInput(f"{exc}; nothing was recorded: every login node finds a job by its pointer there, so "
                       "fix that folder, then submit again") from None
    try:
        edge.use_cases(ctx).record_job().check_free(spec.name)
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    edge.notice_unattended(ctx)
    try:
        job = edge.use_cases(ctx).record_job()(spec)
    except JobExists:
        raise BadInput(f"a job named {spec.name} is already recorded; choose another --name") from None
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    if parsable:  # as sbatch --parsable: the name alone, at once, for a script to keep
        print(job, flush=True)
    return supervision.supervise(ctx, job, drain, fresh=True, follow=follow, as_json=as_json,
                                 stream=sys.stderr if parsable else None, job_exit=_job_exit(ctx, job_exit))


def _submit_sweep(ctx: typer.Context, drain: Interrupts, template: JobSpec, elements: list[JobSpec], *,
                  as_json: bool, parsable: bool, job_exit: bool) -> int:
    """Record every element of the sweep ``template`` names, at once or not at all, then supervise them."""
    edge.open_store(ctx)
    record = edge.use_cases(ctx).record_sweep()
    with edge.store_errors():  # asked once: every element has the same cluster, needs and options
        refused = record.ready(template.cluster, template.resources, template.options)
    if refused is not None:
        raise BadInput(refused)
    try:
        record.pointers_writable()
    except PointerError as exc:
        raise BadInput(f"{exc}; nothing was recorded: every login node finds a job by its pointer there, so "
                       "fix that folder, then submit again") from None
    try:
        record.check_free(template.name, [element.name for element in elements])
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    edge.notice_unattended(ctx)
    try:
        record(template.name, elements)
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    if parsable:  # the sweep's name alone, once every element is recorded, for a script to keep
        print(template.name, flush=True)
    return sweep_supervision.supervise_sweep(ctx, template.name, drain, fresh=True, as_json=as_json,
                                             stream=sys.stderr if parsable else None, job_exit=job_exit)


def supervise(ctx: typer.Context, job: str | None = typer.Argument(None, metavar="JOB|SWEEP"),
              every: bool = typer.Option(False, "--all",
                                         help="every Unattended job and sweep element of this host, in one "
                                              "supervisor"),
              follow: bool = typer.Option(False, "--follow", "-f",
                                          help="show the job's stdout and stderr while it runs"),
              as_json: bool = typer.Option(False, "--json",
                                           help="when the job ends, one JSON object on stdout (docs/json.md); "
                                                "the live view on stderr"),
              job_exit: bool | None = _exit_option()) -> int:
    """Reattach a supervisor to a job, a sweep or (--all) every Unattended job (never one another holds).

    A sweep's elements that another live supervisor holds are listed, never taken."""
    if every == (job is not None):
        raise BadInput("give a JOB or SWEEP, or --all")
    if every:
        drain = edge.interrupts(ctx)
        edge.open_store(ctx)
        return sweep_supervision.supervise_unattended(ctx, drain, as_json=as_json)
    assert job is not None
    # another host's job: supervised there, in the foreground
    words = ["supervise", job, *(["--json"] if as_json else []),
             *([] if job_exit is None else ["--job-exit-code" if job_exit else "--dunscaith-exit-code"])]
    edge.owned_elsewhere(ctx, job, words, follow=True, sweeps=True)
    drain = edge.interrupts(ctx)
    edge.open_store(ctx)
    recorded = sweep_supervision.recorded_as(ctx, job)
    if recorded == "sweep":
        edge.notice_unattended(ctx, skip=job)
        return sweep_supervision.supervise_sweep(ctx, JobId(job), drain, fresh=False, as_json=as_json)
    if recorded is None:  # nothing of that name here: a sweep whose elements' pointers name another host?
        edge.sweep_owned_elsewhere(ctx, job, words)
    edge.notice_unattended(ctx, skip=job)
    return supervision.supervise(ctx, JobId(job), drain, fresh=False, follow=follow, as_json=as_json,
                                 job_exit=_job_exit(ctx, job_exit))


def register(app: typer.Typer) -> None:
    settings: dict[str, Any] = {"allow_interspersed_args": False}
    app.command("submit", cls=_WordsCommand, context_settings=settings)(submit)  # its exit codes: help_text.EPILOGS
    app.command("supervise")(supervise)  # its exit codes: help_text.EPILOGS
