"""The settings of one ``[clusters.NAME]`` table with ``adapter = "gridengine"``, as the scheduler uses them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class GridEngineConfig:
    name: str = "gridengine"  # the cluster's name in dunscaith's configuration
    bin_dir: Path | None = None  # where qsub, qstat, ... live; None: the PATH of the merged environment
    env: Mapping[str, str] = field(default_factory=dict)  # SGE_ROOT, SGE_CELL, SGE_QMASTER_PORT, ...
    parallel_environment: str | None = "smp"  # cpus → -pe <this> N; None: a job asking for cpus is refused
    command_timeout: float = 60.0  # qstat, qrls, qhold, qdel, qmod, qacct (none of them makes a job)
    # qsub's timeout: it gives up by itself after ~122 s when qmaster does not answer (notes), so longer
    submit_timeout: float = 180.0
    user: str | None = None  # whose jobs are ours; None: the user running dunscaith
    workdir: Path | None = None  # where qsub runs (so where a job without its own workdir runs); None: cwd
    # where this host keeps what Grid Engine forgets: the nonce of each job it made or saw, and each job it
    # deleted before it started (such a job never gets an accounting record); None: in memory only
    ledger_dir: Path | None = None
