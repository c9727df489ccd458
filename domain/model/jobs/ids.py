"""Names that identify a job, its attempts and the scheduler objects they make."""

from __future__ import annotations

from typing import NewType

JobId = NewType("JobId", str)  # the job's name: every scheduler object of the job carries it
ObjectId = NewType("ObjectId", str)  # the scheduler's id for one object (a Slurm job id, a local instance)
Nonce = NewType("Nonce", str)  # one per attempt, carried by its object (Slurm: --comment)
