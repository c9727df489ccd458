"""The Slurm scheduler: Slurm's own command-line tools, run as subprocesses (never a shell).

``SlurmCliScheduler`` implements the scheduler port with sbatch, scontrol, scancel, squeue and sacct.
Every supervisor on one host shares one query per poll interval through
``adapters.scheduler.shared_query.SharedQueryScheduler``, which wraps it (or any other scheduler).
"""

from dunscaith.adapters.scheduler.slurm.config import SlurmClusterConfig
from dunscaith.adapters.scheduler.slurm.scheduler import SlurmCliScheduler

__all__ = ["SlurmCliScheduler", "SlurmClusterConfig"]
