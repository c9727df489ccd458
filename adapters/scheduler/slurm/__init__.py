"""The Slurm scheduler: Slurm's own command-line tools, run as subprocesses (never a shell).

``SlurmCliScheduler`` implements the scheduler port with sbatch, scontrol, scancel, squeue and sacct;
``CoalescedScheduler`` lets every supervisor on one host share one query per poll interval.
"""

from adapters.scheduler.slurm.coalesced import CoalescedScheduler
from adapters.scheduler.slurm.config import SlurmClusterConfig
from adapters.scheduler.slurm.scheduler import SlurmCliScheduler

__all__ = ["CoalescedScheduler", "SlurmCliScheduler", "SlurmClusterConfig"]
