"""A Grid Engine cluster's ``[clusters.NAME]`` table (docs/gridengine.md "Configuration")."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dunscaith.adapters.kind_settings import ClusterSettings, Seconds, UserPath


class GridEngineClusterSettings(ClusterSettings):
    """A Grid Engine cluster (docs/gridengine.md): none of these changes what a job is, only how it is reached.

    ``env`` carries SGE_ROOT and SGE_CELL (and SGE_QMASTER_PORT / SGE_EXECD_PORT where the cell's
    settings do not give them)."""

    adapter: Literal["gridengine"]
    parallel_environment: str | None = Field(default="smp", min_length=1, pattern=r"^[A-Za-z_][A-Za-z0-9_.-]*$")
    command_timeout: Seconds = Field(default=60.0, gt=0)
    submit_timeout: Seconds = Field(default=180.0, gt=0)
    workdir: UserPath | None = None
    coalesce_max_age: Seconds = Field(default=4.0, gt=0)
