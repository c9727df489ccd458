"""``dunscaith check CLUSTER``: what each of its checks found, one line each, and how the command exits.

A check of a cluster before anything is submitted to it: its controller answers, it keeps the record of
ended jobs (accounting), and it makes and cancels a held object of a test name. Each later check needs
the one before: nothing is sent to a controller that was not reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dunscaith.domain.model.jobs.ids import JobId

CHECK_FAILED_EXIT = 1  # a check failed (docs/exit-codes.md); 0: every check passed; 2: bad input
NAME_PREFIX = "dunscaith-check-"  # the test object's name: a job name no user job is likely to have


class Result(StrEnum):
    OK = "ok"
    FAILED = "failed"
    NOT_KEPT = "not-kept"  # accounting: the cluster keeps none (jobs purged by the controller are not learned)
    NOT_TRIED = "not-tried"  # an earlier check failed: this one needs it, and nothing of it was sent

    @property
    def passed(self) -> bool:
        return self in (Result.OK, Result.NOT_KEPT)


@dataclass(frozen=True, slots=True)
class Probe:
    """What one check found: its result and the line that says it."""

    result: Result
    detail: str


@dataclass(frozen=True, slots=True)
class CheckLine:
    check: str  # "controller", "accounting", "held object"
    result: Result
    detail: str


@dataclass(frozen=True, slots=True)
class CheckReport:
    cluster: str
    adapter: str
    lines: tuple[CheckLine, ...]

    @property
    def passed(self) -> bool:
        return all(line.result.passed for line in self.lines)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else CHECK_FAILED_EXIT


def check_object_name(token: str) -> JobId:
    """The held object's name: the prefix and a random token (hex), within the job-name rule."""
    return JobId(f"{NAME_PREFIX}{token}")
