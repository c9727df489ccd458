"""A Slurm cluster's ``[clusters.NAME]`` table (docs/slurm.md "Settings")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dunscaith.adapters.kind_settings import ClusterSettings, Flag, Seconds, UserPath


class SlurmClusterSettings(ClusterSettings):
    """A Slurm cluster (docs/slurm.md): none of these changes what a job is, only how it is reached."""

    adapter: Literal["slurm"]
    clusters: str | None = None
    command_timeout: Seconds = Field(default=60.0, gt=0)
    submit_timeout: Seconds = Field(default=60.0, gt=0)
    submit_timeout_unknown_floor: Seconds = Field(default=200.0, gt=0)
    accounting: Flag | None = None
    accounting_lookback: Seconds = Field(default=30 * 24 * 3600.0, gt=0)
    workdir: UserPath | None = None
    coalesce_max_age: Seconds = Field(default=4.0, gt=0)
