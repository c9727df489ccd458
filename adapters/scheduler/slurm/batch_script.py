"""What sbatch is given: the batch script on stdin and the argument list, checked before anything is sent."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from dunscaith.domain.model.jobs.objects import ObjectSpec
from dunscaith.domain.model.jobs.sbatch_options import check_sbatch_options
from dunscaith.domain.model.jobs.spec import BadSpec

# A name or nonce travels in --job-name/--comment and in comma-separated --name lists: keep it plain.
_PLAIN = re.compile(r"^[A-Za-z0-9._:@+=-]+$")
MAX_NAME = 200


class SpecRefused(ValueError):
    """The spec cannot be sent as it is; nothing was sent."""


def check_plain(value: str, what: str) -> None:
    if not value or len(value) > MAX_NAME or not _PLAIN.match(value):
        raise SpecRefused(f"{what} {value!r} must be 1–{MAX_NAME} characters of letters, digits and ._:@+=-")


def check_options(options: Sequence[str]) -> None:
    """The rule is the domain's (which options dunscaith owns); here it is only made a refusal."""
    try:
        check_sbatch_options(options)
    except BadSpec as exc:
        raise SpecRefused(f"{exc} (in a job spec)") from None


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
