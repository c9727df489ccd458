"""Slurm's job states (squeue %T, sacct State) in the port's vocabulary."""

from __future__ import annotations

from dunscaith.domain.model.jobs.objects import ObjectState

S = ObjectState
_STATES: dict[str, ObjectState] = {
    "PENDING": S.PENDING,
    "RUNNING": S.RUNNING,
    "CONFIGURING": S.RUNNING,  # nodes allocated and booting: it has started
    "SUSPENDED": S.RUNNING,
    "STOPPED": S.RUNNING,
    "RESIZING": S.RUNNING,
    "COMPLETING": S.STOPPING,
    "SIGNALING": S.STOPPING,
    "STAGE_OUT": S.STOPPING,
    "REQUEUED": S.REQUEUED,
    "REQUEUE_FED": S.REQUEUED,
    "REQUEUE_HOLD": S.HELD,
    "RESV_DEL_HOLD": S.HELD,
    "COMPLETED": S.COMPLETED,
    "FAILED": S.FAILED,
    "SPECIAL_EXIT": S.FAILED,
    "CANCELLED": S.CANCELLED,
    "REVOKED": S.CANCELLED,  # federation: the sibling ran elsewhere
    "TIMEOUT": S.TIMEOUT,
    "DEADLINE": S.TIMEOUT,
    "OUT_OF_MEMORY": S.OUT_OF_MEMORY,
    "NODE_FAIL": S.NODE_FAIL,
    "BOOT_FAIL": S.BOOT_FAIL,
    "PREEMPTED": S.PREEMPTED,
}

# Reasons that mean "held": a user hold (sbatch --hold, scontrol uhold), an admin hold, a requeue-hold.
_HELD_REASONS = ("JobHeldUser", "JobHeldAdmin", "job requeued in held state")


class UnknownState(ValueError):
    pass


def object_state(slurm_state: str, reason: str) -> ObjectState:
    """``CANCELLED by 0`` (sacct) reads as CANCELLED; an unknown state raises rather than guess."""
    word = slurm_state.split(" ", 1)[0].rstrip("+").upper()
    try:
        state = _STATES[word]
    except KeyError:
        raise UnknownState(f"unknown Slurm job state {slurm_state!r}") from None
    if state is S.PENDING and reason.strip() in _HELD_REASONS:
        return S.HELD
    return state


def parse_exit_code(text: str) -> tuple[int | None, int | None]:
    """``3:0`` → (3, None); ``0:15`` → (None, 15): the signal only when one ended it, and then no exit code
    (a process a signal ended has none: Slurm writes 0 there, which read as an exit code said "exit code 0"
    of a killed job); else (None, None)."""
    code, sep, sig = text.strip().partition(":")
    if not sep or not code.isdigit() or not sig.isdigit():
        return None, None
    signal = int(sig) or None
    return (int(code) or None) if signal else int(code), signal


# Ends Slurm decided (a time limit, a deadline, a preemption, a node or boot failure): the job's own code
# is none. scontrol gives the batch step's kill (TIMEOUT 0:15) while slurmctld still knows the job, sacct
# the job's 0:0 once it is purged: read as they come, one job's end would depend on when it was read.
_ENDED_BY_SLURM = frozenset({S.TIMEOUT, S.PREEMPTED, S.NODE_FAIL, S.BOOT_FAIL})


def ended_exit_code(state: ObjectState, text: str) -> tuple[int | None, int | None]:
    """How a job in ``state`` ended, from its ExitCode: none for an end Slurm decided, and ``0:0`` of a job
    that did not complete is no code at all, never "exit code 0"."""
    code, sig = parse_exit_code(text)
    if state in _ENDED_BY_SLURM or (state is not S.COMPLETED and code == 0 and sig is None):
        return None, None
    return code, sig
