"""What a user asked to run, and where: the job spec recorded in a job's first event."""

from __future__ import annotations

from dataclasses import dataclass

from dunscaith.domain.model.jobs.errors import BadSpec as BadSpec
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import ObjectSpec
from dunscaith.domain.model.jobs.recovery_settings import NO_RECOVERY, Recovery, SignalBefore, signal_problem
from dunscaith.domain.model.jobs.resources import NO_NEEDS, Resources
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind, PipelineMember
from dunscaith.domain.model.program import program_problem


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: JobId
    cluster: str
    adapter: str  # the scheduler adapter that reaches the cluster ("local", "slurm")
    command: tuple[str, ...] = ()
    script: str | None = None  # the text of a batch script, read once at submit
    workdir: str | None = None
    max_attempts: int = 3  # recovery policy: attempts in all, the first one included
    # the scheduler's own options, passed through as given (one argument each: --constraint=a100), read
    # and checked by that scheduler's adapter only; a record made before resources holds them all here
    options: tuple[str, ...] = ()
    env: tuple[str, ...] = ()  # NAME=VALUE pairs set in the job's environment
    resources: Resources = NO_NEEDS  # what the job needs, in no scheduler's words
    member: SweepMember | None = None  # the sweep this job is an element of (domain/model/jobs/sweeps.py)
    # the jobs and sweeps it waits for before it may be created (domain/model/jobs/waits.py, dependencies.py)
    waits: tuple[Dependency, ...] = ()
    step_of: PipelineMember | None = None  # the pipeline this job is a step of (its elements too)
    # the opt-in recovery of ends out of memory and past the time limit (recovery.py), and the signal sent
    # before the time limit (submit --signal-before): the cluster's settings and submit's flags, at submit
    recovery: Recovery = NO_RECOVERY
    signal_before: SignalBefore | None = None
    notify: tuple[str, ...] = ()  # what notify.command is told of this job (domain/model/jobs/notices.py)

    def __post_init__(self) -> None:
        if bool(self.command) == (self.script is not None):
            raise BadSpec("give either a command (after --) or a script, not both and not neither")
        problem = program_problem(self.command) if self.command else None
        if problem is not None:
            raise BadSpec(problem)
        if self.max_attempts < 1:
            raise BadSpec("max_attempts must be at least 1")
        if self.member is None and any(w.kind is DependencyKind.AFTER_EACH for w in self.waits):
            raise BadSpec("after_each is for an element of a sweep: element i waits for element i of another")
        for pair in self.env:
            name, eq, _ = pair.partition("=")
            if not eq or not name or not (name[0].isalpha() or name[0] == "_") or not all(
                    ch.isalnum() or ch == "_" for ch in name):
                raise BadSpec(f"environment variable {pair!r} must be NAME=VALUE (NAME of letters, digits, _)")

    @property
    def environment(self) -> dict[str, str]:
        return dict(pair.split("=", 1) for pair in self.env)

    def object_spec(self, nonce: Nonce) -> ObjectSpec:
        return ObjectSpec(name=self.name, nonce=nonce, command=self.command, script=self.script,
                          workdir=self.workdir, env=self.environment, options=self.options,
                          resources=self.resources, signal_before=self.signal_before)


def submission_problem(spec: JobSpec) -> str | None:
    """What refuses a job submitted now, beyond what every recorded spec holds: a record made before one of
    these rules must still read, so they are checked at submit, not in ``JobSpec`` itself."""
    names = [pair.partition("=")[0] for pair in spec.env]
    twice = next((name for index, name in enumerate(names) if name in names[:index]), None)
    if twice is not None:  # one of the two would be lost without a word (remote run refuses the same)
        return f"--env {twice} is given twice: give each variable once"
    if spec.script is not None and not spec.script.strip():
        return "the script has nothing in it (empty, or blank lines only): there is nothing to run"
    return signal_problem(spec.signal_before, spec.resources)
