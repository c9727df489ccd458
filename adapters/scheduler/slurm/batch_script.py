"""What sbatch is given: the batch script on stdin and the argument list, checked before anything is sent."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from domain.model.jobs.objects import ObjectSpec

# Options dunscaith sets itself; a job spec that sets them would break the name/nonce/hold barrier.
_OWN_OPTIONS = {
    "--job-name": "the job name is dunscaith's (every object of a job carries it)",
    "-J": "the job name is dunscaith's (every object of a job carries it)",
    "--comment": "the comment carries the attempt's nonce",
    "--hold": "objects are always created held",
    "-H": "objects are always created held",
    "--parsable": "dunscaith reads the answer itself",
    "--wrap": "the script is dunscaith's",
    "--clusters": "set clusters in the cluster's configuration instead",
    "-M": "set clusters in the cluster's configuration instead",
    "--array": "an array makes many objects under one id; supervise one object per job",
    "-a": "an array makes many objects under one id; supervise one object per job",
    "--wait": "sbatch must answer as soon as the job is made",
    "-W": "sbatch must answer as soon as the job is made",
    "--test-only": "the job must be made",
    "--chdir": "set the job spec's workdir instead",
    "-D": "set the job spec's workdir instead",
}

# A name or nonce travels in --job-name/--comment and in comma-separated --name lists: keep it plain.
_PLAIN = re.compile(r"^[A-Za-z0-9._:@+=-]+$")
MAX_NAME = 200


class SpecRefused(ValueError):
    """The spec cannot be sent as it is; nothing was sent."""


def check_plain(value: str, what: str) -> None:
    if not value or len(value) > MAX_NAME or not _PLAIN.match(value):
        raise SpecRefused(f"{what} {value!r} must be 1–{MAX_NAME} characters of letters, digits and ._:@+=-")


def check_options(options: Sequence[str]) -> None:
    for option in options:
        key = option.split("=", 1)[0]
        if key in _OWN_OPTIONS:
            raise SpecRefused(f"sbatch option {key} is not allowed in a job spec: {_OWN_OPTIONS[key]}")
        if key.startswith("--") and len(key) > 2:
            # sbatch (getopt_long) takes any unambiguous prefix: --arr is --array.
            for own, why in _OWN_OPTIONS.items():
                if own.startswith("--") and own.startswith(key):
                    raise SpecRefused(f"sbatch option {key} (short for {own}) is not allowed in a job spec: {why}")
        short = key[:2]
        if not key.startswith("--") and short in _OWN_OPTIONS:
            raise SpecRefused(f"sbatch option {short} is not allowed in a job spec: {_OWN_OPTIONS[short]}")


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
    args = [*spec.options]
    if spec.workdir is not None:
        args.append(f"--chdir={spec.workdir}")
    args += ["--parsable", "--hold", f"--job-name={spec.name}", f"--comment={spec.nonce}"]
    if clusters:
        args.append(f"--clusters={clusters}")
    return args
