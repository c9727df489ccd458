"""What ``qsub`` is given (the script on stdin, the argument list, checked before anything is sent) and every
answer it can give, classified once: created, refused (proves no job was made), or unknown.

A job's needs become qsub's options here, and only here: cpus → ``-pe <the cluster's PE> N``, memory →
``-l h_vmem=<per slot>M`` (Grid Engine's h_vmem is per slot: the job's memory over its cpus, rounded up),
time limit → ``-l h_rt=<seconds>``, queue → ``-q``, account → ``-P`` (a project), export → ``-V`` (ALL) or
``-v NAMES``. gpus and qos have no Grid Engine word of their own here: refused in one line (the cluster's
own ``-l`` resource goes under the neutral pass-through option). A signal before the time limit
(``--signal-before``) is refused too (``SIGNAL_REFUSAL``): SGE 8.1.9 has no way to send it that keeps the limit.

The answers (DESIGN §4a): only an answer that proves nothing was made is a refusal. qmaster's own
rejections ("Unable to run job: ..." naming the bad queue, resource, PE or value) and qsub's own option
errors are refusals; "unable to send message to qmaster", a commlib error, "Error reading answer list", a
timeout, a killed qsub or any text not in the tables is UNKNOWN: the job may exist (a qsub killed 2 ms
after it started had made its job, ../shared/notes/gridengine.md), is never resent, and is found by its
nonce.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from dunscaith.adapters.scheduler import own_options as own
from dunscaith.adapters.scheduler.create_answer import before_the_words, job_id_on_last_line
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome, ObjectSpec
from dunscaith.domain.model.jobs.resources import Need, Resources

NONCE_VARIABLE = "dunscaith_nonce"  # the -ac context variable carrying the attempt's nonce
_PLAIN = re.compile(r"^[A-Za-z0-9._:@+=-]+$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9._+=-]*$")  # a Grid Engine object name cannot start with a digit
MAX_NAME = 200


class SpecRefused(ValueError):
    """The spec cannot be sent as it is; nothing was sent."""


_ARRAY = own.sweeps_own("array job")
_WAIT = own.answers_at_once("qsub")
_CONTEXT = "the job context carries the attempt's nonce"
OWN_OPTIONS: dict[str, str] = {
    "-N": own.JOB_NAME,
    "-h": own.HELD,
    "-terse": own.ANSWER,
    "-t": _ARRAY,
    "-tc": _ARRAY,
    "-sync": _WAIT,
    "-now": _WAIT,
    "-w": "dunscaith asks qsub to check with -w e",
    "-ac": _CONTEXT,
    "-dc": _CONTEXT,
    "-sc": _CONTEXT,
    "-b": own.SCRIPT,
    "-C": own.SCRIPT,
    "-cwd": own.WORKDIR,
    "-wd": own.WORKDIR,
    "-@": "options come from the job spec alone",
    "-S": "the shell comes from the script's #! line",
    "-verify": own.MADE,
}


def check_options(options: Sequence[str]) -> None:
    """A refusal naming the first option dunscaith owns."""
    for option in options:
        if option in OWN_OPTIONS:
            raise SpecRefused(f"qsub option {option} is not allowed: {OWN_OPTIONS[option]}")


def check_name(value: str, what: str) -> None:
    if not value or len(value) > MAX_NAME or not _NAME.match(value):
        raise SpecRefused(
            f"{what} {value!r} must be 1–{MAX_NAME} characters of letters, digits and ._+=-, "
            "not starting with a digit (Grid Engine's object names)"
        )


def check_nonce(value: str) -> None:
    if not value or len(value) > MAX_NAME or not _PLAIN.match(value) or "," in value:
        raise SpecRefused(f"nonce {value!r} must be 1–{MAX_NAME} characters of letters, digits and ._:@+=-")


# Measured on SGE 8.1.9 (docs/gridengine.md): ``-l s_rt=T-S,h_rt=T`` sends SIGUSR1 at s_rt, but once a job has
# trapped it neither s_rt's kill (``notify`` later) nor h_rt is ever enforced: the job runs on for ever. ``-notify``
# sends SIGUSR2 at h_rt and SIGKILL the queue's ``notify`` later: the lead is the queue's, not the job's.
SIGNAL_REFUSAL = (
    "Grid Engine cannot send --signal-before's signal and still enforce the time limit (with s_rt it never "
    "kills a job that traps SIGUSR1): drop --signal-before, or pass --scheduler-option=-notify for a SIGUSR2 at "
    "--time and the kill the queue's notify time later"
)


def needs_refusal(resources: Resources, parallel_environment: str | None) -> str | None:
    """One line naming a need this cluster cannot honour, or None."""
    if resources.gpus is not None:
        return (
            f"Grid Engine has no {Need.GPUS} request of its own: pass your cluster's GPU resource as a "
            "scheduler option (for example -l gpu=1)"
        )
    if resources.qos is not None:
        return f"Grid Engine has no {Need.QOS}: pass a priority or project as a scheduler option instead"
    if resources.cpus is not None and resources.cpus > 1 and parallel_environment is None:
        return (
            "this cluster names no parallel environment (parallel_environment in its [clusters] table), "
            "so more than one cpu cannot be asked for"
        )
    return None


def needs_args(resources: Resources, parallel_environment: str | None) -> list[str]:
    """The job's needs in qsub's words, in a fixed order."""
    r = resources
    args: list[str] = []
    if r.queue is not None:
        args += ["-q", r.queue]
    slots = r.cpus or 1
    if r.cpus is not None and parallel_environment is not None:
        args += ["-pe", parallel_environment, str(r.cpus)]
    if r.time_limit_s is not None:
        args += ["-l", f"h_rt={r.time_limit_s}"]
    if r.memory_mb is not None:
        args += ["-l", f"h_vmem={-(-r.memory_mb // slots)}M"]
    if r.account is not None:
        args += ["-P", r.account]
    if r.export is not None:
        args += ["-V"] if r.export.upper() == "ALL" else ([] if r.export.upper() == "NONE" else ["-v", r.export])
    return args


def command_script(command: Sequence[str]) -> str:
    """A ``#!/bin/sh`` script that execs ``command`` exactly (each word quoted, no shell expansion)."""
    if not command:
        raise SpecRefused("the command is empty")
    return "#!/bin/sh\nexec " + " ".join(shlex.quote(word) for word in command) + "\n"


def script_for(spec: ObjectSpec) -> tuple[str, str]:
    """(the script sent on stdin, its shell for ``-S``). Grid Engine's posix_compliant queues ignore ``#!`` and
    run the script with ``-S``: a ``#!`` of one absolute path is that shell; any other (``#!/usr/bin/env
    python3``) is run from a copy by a ``/bin/sh`` wrapper, so the line is honoured as a shell would."""
    if spec.script is not None and spec.command:
        raise SpecRefused("a job spec has either a command or a script, not both")
    if spec.script is None:
        return command_script(spec.command), "/bin/sh"
    if not spec.script.startswith("#!"):
        raise SpecRefused("a batch script must start with #! and the path of an interpreter")
    first = spec.script.splitlines()[0][2:].strip()
    if first.startswith("/") and len(first.split()) == 1:
        return spec.script, first
    return wrapped(spec.script), "/bin/sh"


def wrapped(script: str) -> str:
    """A ``/bin/sh`` script that writes ``script`` to a file of its own, runs it and removes it."""
    mark = "DUNSCAITH_SCRIPT_END"
    while mark in script:
        mark += "_"
    return (
        "#!/bin/sh\n_dunscaith_script=$(mktemp) || exit 1\n"
        f"cat > \"$_dunscaith_script\" <<'{mark}'\n{script.rstrip(chr(10))}\n{mark}\n"
        'chmod 700 "$_dunscaith_script"\n"$_dunscaith_script" "$@"\n_dunscaith_rc=$?\n'
        'rm -f "$_dunscaith_script"\nexit $_dunscaith_rc\n'
    )


def qsub_args(spec: ObjectSpec, shell: str, parallel_environment: str | None) -> list[str]:
    """qsub's arguments: the needs, the spec's own options, then dunscaith's (the last one wins in qsub)."""
    check_name(spec.name, "job name")
    check_nonce(spec.nonce)
    check_options(spec.options)
    problem = needs_refusal(spec.resources, parallel_environment)
    if problem:
        raise SpecRefused(problem)
    if spec.signal_before is not None:
        raise SpecRefused(SIGNAL_REFUSAL)
    args = [*needs_args(spec.resources, parallel_environment), *spec.options]
    args += ["-wd", spec.workdir] if spec.workdir is not None else ["-cwd"]
    args += ["-S", shell, "-h", "-terse", "-w", "e", "-N", spec.name, "-ac", f"{NONCE_VARIABLE}={spec.nonce}"]
    return args


# ---- answers ---------------------------------------------------------------------------------------
# The request may have reached qmaster, or nothing proves it did not: never a refusal.
MAY_HAVE_REACHED: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), why)
    for p, why in (
        (r"unable to send message to qmaster", "qmaster was not reached, or its answer was lost"),
        (r"commlib error", "the connection to qmaster failed"),
        (r"Error reading answer list from qmaster", "qmaster's answer could not be read"),
        (r"unable to contact qmaster", "qmaster was not reached, or its answer was lost"),
        (r"got send error|got receive error|got select error", "the connection to qmaster failed"),
    )
)
# Answers that prove no job was made (qsub 8.1.9, measured: ../shared/notes/gridengine.md).
REFUSALS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.IGNORECASE), why)
    for p, why in (
        (r"Job was rejected because", "qmaster rejected the job"),
        (r"job rejected:", "qmaster rejected the job"),
        (r"unknown resource", "no such resource"),
        (r"is not a memory value|is not a time value|is not a valid", "a value qsub or qmaster refuses"),
        (r"error: no suitable queues", "no queue can ever run it (checked with -w e)"),
        (r"does not exist", "a named object does not exist"),
        (r"^qsub: ", "qsub refused its arguments before contacting qmaster"),
        (r"invalid option argument|ERROR! .* option must have argument", "qsub refused its arguments"),
        (r"denied:", "qmaster denied it"),
        (r"exceeds the limit|would exceed|max_u_jobs|max_jobs", "a limit refuses it"),
    )
)
_JOB_ID = re.compile(r"^([0-9]+)(?:\.[0-9]+-[0-9]+:[0-9]+)?$")  # -terse: "12", or "12.1-5:1" for an array


def classify(
    returncode: int | None, stdout: str, stderr: str, *, timed_out: bool = False, spawn_error: str = ""
) -> CreateAnswer:
    """What one qsub run says about the job it was asked to make."""
    job_id = job_id_on_last_line(_JOB_ID, stdout)
    settled = before_the_words("qsub", returncode, job_id, timed_out=timed_out, spawn_error=spawn_error)
    if settled is not None:
        return settled
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and ln.strip() != "Exiting."]
    said = " / ".join(lines[:10])
    if returncode == 0:
        return CreateAnswer(CreateOutcome.UNKNOWN, detail=f"qsub answered without a job id: {stdout.strip()[:200]!r}")
    for table, outcome in ((MAY_HAVE_REACHED, CreateOutcome.UNKNOWN), (REFUSALS, CreateOutcome.REFUSED)):
        for pattern, why in table:
            if any(pattern.search(line) for line in lines):
                return CreateAnswer(outcome, detail=f"{said} ({why})")
    return CreateAnswer(
        CreateOutcome.UNKNOWN, detail=f"qsub exited with {returncode}, an answer not known to prove anything: {said!r}"
    )
