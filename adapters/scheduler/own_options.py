"""Why dunscaith keeps a scheduler client's option for itself, in the words every client-command kind gives
(sbatch's and qsub's tables of the options a job spec may not carry): each would break the barrier every
object relies on (created held, named by the job, its attempt's nonce with it) or what dunscaith reads."""

from __future__ import annotations

JOB_NAME = "the job name is dunscaith's (every object of a job carries it)"
HELD = "objects are always created held"
ANSWER = "dunscaith reads the answer itself"
SCRIPT = "the script is dunscaith's"
MADE = "the job must be made"
WORKDIR = "use --chdir of submit (the job spec's working directory) instead"


def answers_at_once(client: str) -> str:
    return f"{client} must answer as soon as the job is made"


def sweeps_own(array: str) -> str:
    """``array``: the scheduler's word for it (Slurm's job array, Grid Engine's array job)."""
    return f"a sweep's {array} is dunscaith's own (submit --name NAME --array START-END)"
