"""The settings of one ``[clusters.NAME]`` table with ``adapter = "slurm"``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path


@dataclass(frozen=True, slots=True)
class SlurmClusterConfig:
    name: str = "slurm"  # the cluster's name in dunscaith's configuration (names the shared query cache)
    bin_dir: Path | None = None  # where sbatch, squeue, ... live; None: the PATH of the merged environment
    env: Mapping[str, str] = field(default_factory=dict)  # added to every Slurm command's environment
    clusters: str | None = None  # passed as --clusters=… to every command when set
    command_timeout: float = 60.0  # squeue, scontrol, scancel, sacct (none of them makes a job)
    # sbatch's timeout; raised to at least 2 × MessageTimeout + submit_timeout_margin once it is read
    submit_timeout: float = 60.0
    submit_timeout_margin: float = 10.0
    # when MessageTimeout cannot be read, sbatch gets at least this long (Slurm sites rarely exceed 100 s)
    submit_timeout_unknown_floor: float = 200.0
    accounting: bool | None = None  # sacct usable? None: ask `scontrol show config` (AccountingStorageType)
    accounting_lookback: timedelta = timedelta(days=30)  # sacct --starttime when confirming absence
    user: str | None = None  # whose objects are ours; None: the user running dunscaith
    workdir: Path | None = None  # where sbatch runs (so where a job without its own workdir runs); None: cwd


def clusters_args(clusters: str | None) -> list[str]:
    """``--clusters=…`` when the cluster's table names them (``clusters``): every Slurm command of the cluster
    takes it, or it would ask the local controller's own cluster."""
    return [f"--clusters={clusters}"] if clusters else []
