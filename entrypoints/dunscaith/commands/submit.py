"""``dunscaith submit / supervise``: record a job and supervise it, or reattach a supervisor."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, submit_job, supervision
from dunscaith.entrypoints.path_args import path_arg

if TYPE_CHECKING:
    from collections.abc import Callable

    from typer._click.core import Context as ParsingContext  # what typer's own click passes to parse_args

    from dunscaith.domain.services.jobs.notify_sweep import NotifySweep
    from dunscaith.domain.services.jobs.owning_host import OwningHost
    from dunscaith.domain.services.jobs.submit import RecordJob, RecordPipeline, RecordSweep
    from dunscaith.domain.services.jobs.supervise_job import SuperviseJob
    from dunscaith.domain.services.jobs.supervise_sweep import SuperviseSweep

_AS_COMMAND = "dunscaith.as_command"
_MIXED = "dunscaith.script_and_command"


class _WordsCommand(TyperCommand):
    """Notes whether the words were given after ``--``: only that tells a COMMAND from a SCRIPT, and
    parsing drops it."""

    def parse_args(self, ctx: ParsingContext, args: list[str]) -> list[str]:
        given = args.count("--")  # counted first: parsing consumes the list it is given
        rest = super().parse_args(ctx, args)
        words = ctx.params.get("words") or []
        # parsing drops the "--" that ends the options; one kept among the words came after a SCRIPT
        # (submit script.sh -- true): options end at the first word, so the "--" is taken as a word
        ctx.meta[_AS_COMMAND] = given > list(words).count("--")
        ctx.meta[_MIXED] = given > 0 and not ctx.meta[_AS_COMMAND]
        return rest


_SIGNAL_BEFORE = typer.Option(None, "--signal-before", metavar="SIGNAL@SECONDS", help=(
    "send SIGNAL this many seconds before --time (Slurm: --signal=B:SIGNAL@SECONDS, to the batch shell; the local "
    "scheduler: to the job's process group), to checkpoint; with --requeue-on-time-limit N the job is then run "
    "again up to N times"))
_REQUEUE = typer.Option(None, "--requeue-on-time-limit", metavar="N", help=(
    "run an attempt that reached its time limit after its signal again with the same needs, up to N times "
    "(default: recovery.requeue_on_time_limit)"))
_ON_OOM = typer.Option(None, "--on-out-of-memory", metavar="KEY=VALUE,...", help=(
    "grow the memory after an end out of memory: memory_factor=2.0,max_memory=64G,attempts=2 (default: "
    "recovery.on_out_of_memory); off: no"))
_ON_TIME = typer.Option(None, "--on-time-limit", metavar="KEY=VALUE,...", help=(
    "grow the time limit after an end at it: time_factor=1.5,max_time=2-00:00:00,attempts=2 (default: "
    "recovery.on_time_limit); off: no"))


def _exit_option() -> Any:
    return typer.Option(None, "--job-exit-code/--dunscaith-exit-code",
                        help="once the job has its outcome, exit with the job's own exit code (128+n for a signal "
                             "n), as srun does; default: supervise.exit_code (docs/exit-codes.md)")


@edge.injected
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
    sbatch: list[str] = typer.Option([], "--scheduler-option", "--sbatch", metavar="ARG",
                                     help="one of the cluster's scheduler's own options, passed as given "
                                          "(Slurm: --scheduler-option=--constraint=a100; repeatable; also --sbatch)"),
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
    after: list[str] = typer.Option([], "--after", metavar="NAME",
                                    help="create the job only once the job or sweep NAME succeeded (a sweep: every "
                                         "element); repeatable (docs/pipelines.md)"),
    after_any: list[str] = typer.Option([], "--after-any", metavar="NAME",
                                        help="create the job once the job or sweep NAME has its outcome, whatever "
                                             "it is; repeatable"),
    after_each: list[str] = typer.Option([], "--after-each", metavar="SWEEP",
                                         help="a sweep: element i waits until element i of SWEEP succeeded (the "
                                              "same indices); repeatable"),
    pipeline: Path | None = typer.Option(None, "--pipeline", metavar="FILE", parser=path_arg,
                                         help="run a pipeline: the steps of a TOML FILE, each a job or a sweep "
                                              "waiting for others, recorded at once and supervised here "
                                              "(--name NAME overrides its name; docs/pipelines.md)"),
    job_exit: bool | None = _exit_option(),
    notify: bool | None = typer.Option(None, "--notify/--no-notify",
                                       help="tell notify.command when the job (or the sweep) ends, or do not; "
                                            "default: when notify.command is set (docs/notifications.md)"),
    signal_before: str | None = _SIGNAL_BEFORE,
    requeue: str | None = _REQUEUE,
    on_oom: str | None = _ON_OOM,
    on_time: str | None = _ON_TIME,
    *,
    record_job: Callable[[], RecordJob] = edge.GIVEN,
    record_sweep: Callable[[], RecordSweep] = edge.GIVEN,
    record_pipeline: Callable[[], RecordPipeline] = edge.GIVEN,
    owning_host: Callable[[], OwningHost] = edge.GIVEN,
    supervise_job: Callable[..., SuperviseJob] = edge.GIVEN,
    supervise_sweep: Callable[..., SuperviseSweep] = edge.GIVEN,
    notify_sweep: Callable[[], NotifySweep] = edge.GIVEN,
    at: edge.At = edge.AT,
) -> int:
    """Record a job, submit it held, release it once it is confirmed, and supervise it to its outcome.

    The job runs on the local scheduler (this machine, which honours --cpus-per-task, --mem and --time)
    unless --cluster names another cluster; what its scheduler cannot honour is refused before anything
    is recorded. The supervisor stays in the foreground: a signal stops the supervisor, never the job.

    With --array or --each, a sweep: --name NAME's elements NAME-INDEX, each a job with every flag given
    here, all recorded at once (or none), then supervised by this one process.

    With --after NAME, the job is recorded at once and created only once NAME succeeded. With --pipeline
    FILE, every step of the file is recorded at once (or none), then supervised by this one process."""
    supervising = supervision.Supervising(supervise_job, supervise_sweep, notify_sweep)
    if ctx.meta.get(_MIXED):
        raise BadInput("give a SCRIPT or a command after --, not both (submit SCRIPT, or submit -- COMMAND "
                       "ARGS...)")
    if pipeline is not None:
        from dunscaith.entrypoints.dunscaith import submit_pipeline

        submit_pipeline.not_with_pipeline({
            "a command": bool(words), "--array": array is not None, "--each": each is not None,
            "--max-running": max_running is not None, "--after": bool(after), "--after-any": bool(after_any),
            "--after-each": bool(after_each), "--partition": partition is not None, "--time": time is not None,
            "--mem": mem is not None, "--cpus-per-task": cpus is not None, "--gpus": gpus is not None,
            "--account": account is not None, "--qos": qos is not None, "--export": export is not None,
            "--scheduler-option": bool(sbatch), "--env": bool(env), "--chdir": chdir is not None,
            "--follow": follow, "--job-exit-code": bool(job_exit), "--signal-before": signal_before is not None,
            "--requeue-on-time-limit": requeue is not None, "--on-out-of-memory": on_oom is not None,
            "--on-time-limit": on_time is not None})
        return submit_pipeline.submit_pipeline(at, pipeline, name, cluster=cluster, notify=notify,
                                               as_json=as_json, parsable=parsable, record_pipeline=record_pipeline,
                                               supervising=supervising)
    cases = submit_job.Submitting(record_job, record_sweep, owning_host, supervising)
    return submit_job.submit(at, cases, words or [], as_command=bool(ctx.meta.get(_AS_COMMAND, False)),
                             cluster=cluster,
                             name=name, follow=follow, partition=partition, time=time, mem=mem, cpus=cpus, gpus=gpus,
                             account=account, qos=qos, export=export, sbatch=tuple(sbatch), env=tuple(env),
                             chdir=chdir, as_json=as_json, parsable=parsable, array=array, each=each,
                             max_running=max_running, job_exit=job_exit, notify=notify,
                             recovery_flags=(signal_before, requeue, on_oom, on_time), after=tuple(after),
                             after_any=tuple(after_any), after_each=tuple(after_each))


@edge.injected
def supervise(ctx: typer.Context, job: str | None = typer.Argument(None, metavar="JOB|SWEEP|PIPELINE"),
              every: bool = typer.Option(False, "--all",
                                         help="every Unattended job and sweep element of this host, in one "
                                              "supervisor"),
              follow: bool = typer.Option(False, "--follow", "-f",
                                          help="show the job's stdout and stderr while it runs"),
              as_json: bool = typer.Option(False, "--json",
                                           help="when the job ends, one JSON object on stdout (docs/json.md); "
                                                "the live view on stderr"),
              job_exit: bool | None = _exit_option(), *,
              supervise_job: Callable[..., SuperviseJob] = edge.GIVEN,
              supervise_sweep: Callable[..., SuperviseSweep] = edge.GIVEN,
              notify_sweep: Callable[[], NotifySweep] = edge.GIVEN, at: edge.At = edge.AT) -> int:
    """Reattach a supervisor to a job, a sweep or (--all) every Unattended job (never one another holds).

    A sweep's elements that another live supervisor holds are listed, never taken."""
    from dunscaith.entrypoints.dunscaith import sweep_supervision  # supervise's alone

    if every == (job is not None):
        raise BadInput("give a JOB or SWEEP, or --all")
    cases = supervision.Supervising(supervise_job, supervise_sweep, notify_sweep)
    if every:
        drain = edge.interrupts(at)
        edge.open_store(at)
        return sweep_supervision.supervise_unattended(at, drain, cases, as_json=as_json)
    assert job is not None
    # another host's job: supervised there, in the foreground
    words = ["supervise", job, *(["--json"] if as_json else []),
             *([] if job_exit is None else ["--job-exit-code" if job_exit else "--dunscaith-exit-code"])]
    edge.owned_elsewhere(at, job, words, follow=True, sweeps=True)
    drain = edge.interrupts(at)
    edge.open_store(at)
    recorded = sweep_supervision.recorded_as(at, job, cases)
    if recorded == "sweep":
        if job_exit:
            raise BadInput(f"--job-exit-code is one job's code, and {job} is a sweep of many: a sweep's code is "
                           "dunscaith's (docs/sweeps.md); drop it")
        edge.notice_unattended(at, skip=job)
        return sweep_supervision.supervise_sweep(at, JobId(job), drain, cases, fresh=False, as_json=as_json)
    if recorded == "pipeline":
        edge.notice_unattended(at, skip=job)
        return sweep_supervision.supervise_pipeline(at, JobId(job), drain, cases, fresh=False, as_json=as_json)
    if recorded is None:  # nothing of that name here: a sweep whose elements' pointers name another host?
        edge.sweep_owned_elsewhere(at, job, words)
    edge.notice_unattended(at, skip=job)
    return supervision.supervise(at, JobId(job), drain, cases.job(), fresh=False, follow=follow, as_json=as_json,
                                 job_exit=submit_job.exit_of_job(at, job_exit))


def register(app: typer.Typer) -> None:
    settings: dict[str, Any] = {"allow_interspersed_args": False}
    app.command("submit", cls=_WordsCommand, context_settings=settings)(submit)  # its exit codes: help_text.EPILOGS
    app.command("supervise")(supervise)  # its exit codes: help_text.EPILOGS
