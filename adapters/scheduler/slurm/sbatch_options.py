"""Which sbatch options a job spec may carry: those dunscaith sets itself would break the barrier every
object relies on (created held, named by the job, its attempt's nonce in the comment)."""

from __future__ import annotations

from collections.abc import Sequence

from dunscaith.adapters.scheduler import own_options as own
from dunscaith.domain.model.jobs.errors import BadSpec

_CLUSTERS = "set clusters in the cluster's configuration instead"
_ARRAY = own.sweeps_own("job array")
_WAIT = own.answers_at_once("sbatch")

OWN_OPTIONS: dict[str, str] = {
    "--job-name": own.JOB_NAME, "-J": own.JOB_NAME,
    "--comment": "the comment carries the attempt's nonce",
    "--hold": own.HELD, "-H": own.HELD,
    "--parsable": own.ANSWER,
    "--wrap": own.SCRIPT,
    "--clusters": _CLUSTERS, "-M": _CLUSTERS,
    "--array": _ARRAY, "-a": _ARRAY,
    "--wait": _WAIT, "-W": _WAIT,
    "--test-only": own.MADE,
    "--chdir": own.WORKDIR, "-D": own.WORKDIR,
}

# sbatch's short options that take a value: in a bundle (-vpdebug) the rest after one is its value.
_SHORT_WITH_VALUE = frozenset("aAbBcCdDeFGiJLmMnNopqStwx")


def check_sbatch_options(options: Sequence[str]) -> None:
    """BadSpec naming the first option dunscaith owns, however it is spelt: ``--hold``, ``--ho`` (sbatch
    takes any unambiguous prefix), ``-H``, or a bundle of short options such as ``-vH`` or ``-va``."""
    for option in options:
        key = option.split("=", 1)[0]
        if key in OWN_OPTIONS:
            raise BadSpec(f"sbatch option {key} is not allowed: {OWN_OPTIONS[key]}")
        if key.startswith("--"):
            if len(key) > 2:
                for own, why in OWN_OPTIONS.items():
                    if own.startswith("--") and own.startswith(key):
                        raise BadSpec(f"sbatch option {key} (short for {own}) is not allowed: {why}")
            continue
        if key.startswith("-") and len(key) > 1:
            for letter in option[1:]:
                own_short = f"-{letter}"
                if own_short in OWN_OPTIONS:
                    raise BadSpec(f"sbatch option {own_short} (in {option}) is not allowed: {OWN_OPTIONS[own_short]}")
                if letter in _SHORT_WITH_VALUE:
                    break  # the rest of the bundle is this option's value
