"""The job requests of one quantum site, each answer classified; no request is ever retried."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from dunscaith.domain.model.qdevices.answers import CheckAnswer, JobRequestAnswer, ResultRead, StateRead
from dunscaith.domain.model.qdevices.sites import SiteName, Step


@dataclass(frozen=True, slots=True)
class JobRequest:
    """What one order asks of the site."""

    order: int
    name: str
    device: str
    circuit: str  # OpenQASM text
    shots: int


class Site(Protocol):
    name: SiteName
    steps: tuple[Step, ...]  # (CREATE,) for a one-step site; VLQ: CREATE, UPLOAD, SUBMIT

    def prepare(self, device: str) -> JobRequestAnswer:
        """Whatever must run before a site's first job (the VLQ init job); OK at once where nothing must."""
        ...

    def create(self, request: JobRequest) -> JobRequestAnswer:
        """The request that makes the job (one-step sites: the whole job). Sent once, never retried."""
        ...

    def upload(self, job: str, request: JobRequest) -> JobRequestAnswer:
        """Multi-step sites: give the created job its files."""
        ...

    def submit(self, job: str) -> JobRequestAnswer:
        """Multi-step sites: hand the created job to the machine (VLQ SubmitJob)."""
        ...

    def state(self, job: str) -> StateRead: ...

    def result(self, job: str) -> ResultRead: ...

    def check(self, device: str) -> CheckAnswer:
        """A request that makes no job: does the site take the token, does it know the device."""
        ...

    def close(self) -> None: ...
