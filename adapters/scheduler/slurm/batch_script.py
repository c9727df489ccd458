"""What sbatch is given: the batch script on stdin and the argument list, checked before anything is sent.

A job's needs (``Resources``) become sbatch's own options here, and only here: queue → ``--partition``,
cpus → ``--cpus-per-task``, memory → ``--mem`` (MiB), time limit → ``--time`` (D-HH:MM:SS; Slurm
rounds up to whole minutes), gpus → ``--gpus``, account, qos and export by their names. The spec's own
sbatch options follow, checked against the ones dunscaith owns (``sbatch_options``); a signal before the
time limit (``submit --signal-before USR1@120``) is ``--signal=B:USR1@120``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from dunscaith.adapters.scheduler.slurm.config import clusters_args
from dunscaith.adapters.scheduler.slurm.sbatch_options import check_sbatch_options
from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.objects import ObjectSpec
from dunscaith.domain.model.jobs.resources import Resources, format_time_limit

# A name or nonce travels in --job-name/--comment and in comma-separated --name lists: keep it plain.
_PLAIN = re.compile(r"^[A-Za-z0-9._:@+=-]+$")
MAX_NAME = 200


class SpecRefused(ValueError):
    """The spec cannot be sent as it is; nothing was sent."""


def check_plain(value: str, what: str) -> None:
    if not value or len(value) > MAX_NAME or not _PLAIN.match(value):
        raise SpecRefused(f"{what} {value!r} must be 1–{MAX_NAME} characters of letters, digits and ._:@+=-")


def check_options(options: Sequence[str]) -> None:
    """A refusal naming the first option dunscaith owns (sbatch_options), or one that is not an option."""
    try:
        check_sbatch_options(options)
    except BadSpec as exc:
        raise SpecRefused(str(exc)) from None


def needs_args(resources: Resources) -> list[str]:
    """The job's needs in sbatch's words, in a fixed order."""
    return resources.given(
        ("queue", "--partition={}".format),
        ("time_limit_s", lambda s: f"--time={format_time_limit(s)}"),
        ("memory_mb", "--mem={}M".format),
        ("cpus", "--cpus-per-task={}".format),
        ("gpus", lambda _: f"--gpus={resources.gpu_request}"),
        *((name, f"--{name}={{}}".format) for name in ("account", "qos", "export")),
    )


def command_script(command: Sequence[str]) -> str:
    """A ``#!/bin/sh`` script that execs ``command`` exactly (each word quoted, no shell expansion)."""
    if not command:
        raise SpecRefused("the command is empty")
    return "#!/bin/sh\nexec " + " ".join(shlex.quote(word) for word in command) + "\n"


def script_for(spec: ObjectSpec) -> str:
    if spec.script is not None and spec.command:
        raise SpecRefused("a job spec has either a command or a script, not both")
    if spec.script is not None:
        if not spec.script.startswith("#!"):
            raise SpecRefused("a batch script must start with #! and the path of an interpreter")
        return spec.script
    return command_script(spec.command)


def sbatch_args(spec: ObjectSpec, clusters: str | None) -> list[str]:
    """sbatch's arguments: the spec's own options first, then dunscaith's (the last one wins in sbatch)."""
    check_plain(spec.name, "job name")
    check_plain(spec.nonce, "nonce")
    check_options(spec.options)
    args = [*needs_args(spec.resources), *spec.options]
    if spec.signal_before is not None:  # to the batch shell only (B:), which a command's script execs into
        args.append(f"--signal=B:{spec.signal_before.signal}@{spec.signal_before.seconds}")
    if spec.workdir is not None:
        args.append(f"--chdir={spec.workdir}")
    args += ["--parsable", "--hold", f"--job-name={spec.name}", f"--comment={spec.nonce}"]
    return [*args, *clusters_args(clusters)]
