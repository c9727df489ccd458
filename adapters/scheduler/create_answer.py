"""What a scheduler's create client (sbatch, qsub) says before its words are read.

Every kind that makes a job with one client run reads its answer in the same order: a client that could not
be started sent nothing; one stopped by our timeout may have made the job; a job id it printed proves the job
(even with a failing exit code); a client killed before printing one may have made it. Only then do the
kind's own tables read what the client wrote.
"""

from __future__ import annotations

import re

from dunscaith.domain.model.jobs.ids import ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome


def job_id_on_last_line(pattern: re.Pattern[str], stdout: str) -> ObjectId | None:
    """The job id ``pattern``'s first group finds on the last line the client printed, if any."""
    lines = [ln.strip() for ln in stdout.splitlines() if ln.strip()]
    if not lines:
        return None
    match = pattern.match(lines[-1])
    return ObjectId(match.group(1)) if match else None


def before_the_words(
    client: str,
    returncode: int | None,
    job_id: ObjectId | None,
    *,
    timed_out: bool,
    spawn_error: str,
    created_detail: str = "",
) -> CreateAnswer | None:
    """The answer of one create client's run that its words do not change, or None when they must be read."""
    if spawn_error:
        return CreateAnswer(
            CreateOutcome.REFUSED, detail=f"{client} could not be started ({spawn_error}); nothing was sent"
        )
    if timed_out:
        return CreateAnswer(
            CreateOutcome.UNKNOWN, detail=f"{client} gave no answer in time and was stopped; the job may exist"
        )
    if job_id is not None:
        return CreateAnswer(CreateOutcome.CREATED, job_id, detail=created_detail)
    if returncode is None or returncode < 0:
        sig = f" by signal {-returncode}" if returncode is not None else ""
        return CreateAnswer(
            CreateOutcome.UNKNOWN, detail=f"{client} was killed{sig} before answering; the job may exist"
        )
    return None
