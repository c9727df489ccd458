"""FakeSite: an in-memory site for tests and benchmarks, with scripted answers and a journal.

Each method takes its next answer from a script queue when one is given, else plays a well-behaved
site: a job id from a counter, ``polls_to_finish`` state reads of "WAITING", then "COMPLETED" and a
result. ``journal_path`` also appends each request as a synced JSON line, so a test can prove across
processes (kill -9, then a resume) that no job-making request was sent twice.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict, deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dunscaith.domain.model.qdevices.answers import (
    CheckAnswer,
    JobAnswer,
    JobRequestAnswer,
    Phase,
    ReadKind,
    ResultRead,
    StateRead,
)
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName, Step
from dunscaith.ports.site import JobRequest

JOB_MAKING = frozenset({"create", "submit"})


class FakeSite:
    def __init__(self, name: SiteName = SiteName.MQSS, *, polls_to_finish: int = 1, seconds: float = 1.0,
                 journal_path: Path | None = None, job_prefix: str = "fake-") -> None:
        self.name = name
        self.steps: tuple[Step, ...] = TRAITS[name].steps
        self.polls_to_finish = polls_to_finish
        self.seconds = seconds
        self.journal: list[tuple[str, Any]] = []
        self.journal_path = journal_path
        self.job_prefix = job_prefix
        self._scripts: dict[str, deque[Any]] = defaultdict(deque)
        self._polls: dict[str, int] = defaultdict(int)
        self._next = 0
        self.configuring: set[str] = set()  # multi-step jobs created and not submitted

    def script(self, method: str, answers: Iterable[Any]) -> None:
        """Queue answers for ``method`` (create, upload, submit, state, result, check, prepare)."""
        self._scripts[method].extend(answers)

    def _log(self, method: str, arg: Any) -> Any:
        self.journal.append((method, arg))
        if self.journal_path is not None:
            fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, (json.dumps({"method": method, "arg": arg}) + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
        queue = self._scripts.get(method)
        return queue.popleft() if queue else None

    def job_requests(self) -> list[tuple[str, Any]]:
        return [entry for entry in self.journal if entry[0] in JOB_MAKING]

    def prepare(self, device: str) -> JobRequestAnswer:
        scripted = self._log("prepare", device)
        return scripted if scripted is not None else JobRequestAnswer(JobAnswer.OK)

    def create(self, request: JobRequest) -> JobRequestAnswer:
        scripted = self._log("create", request.order)
        if scripted is not None:
            return scripted  # type: ignore[no-any-return]
        self._next += 1
        job = f"{self.job_prefix}{os.getpid()}-{self._next}"
        if self.steps != (Step.CREATE,):
            self.configuring.add(job)
        return JobRequestAnswer(JobAnswer.OK, job, 200)

    def upload(self, job: str, request: JobRequest) -> JobRequestAnswer:
        scripted = self._log("upload", job)
        return scripted if scripted is not None else JobRequestAnswer(JobAnswer.OK, job, 200)

    def submit(self, job: str) -> JobRequestAnswer:
        scripted = self._log("submit", job)
        if scripted is None or scripted.kind is not JobAnswer.NOT_SENT:  # one never sent leaves it Configuring
            self.configuring.discard(job)
        return scripted if scripted is not None else JobRequestAnswer(JobAnswer.OK, job, 200)

    def state(self, job: str) -> StateRead:
        scripted = self._log("state", job)
        if scripted is not None:
            return scripted  # type: ignore[no-any-return]
        if job in self.configuring:
            return StateRead(ReadKind.GOOD, Phase.CONFIGURING, "Configuring")
        self._polls[job] += 1
        if self._polls[job] < self.polls_to_finish:
            return StateRead(ReadKind.GOOD, Phase.WAITING, "WAITING")
        return StateRead(ReadKind.GOOD, Phase.COMPLETED, "COMPLETED")

    def result(self, job: str) -> ResultRead:
        scripted = self._log("result", job)
        if scripted is not None:
            return scripted  # type: ignore[no-any-return]
        return ResultRead(ReadKind.GOOD, True, self.seconds, {"00": 1})

    def check(self, device: str) -> CheckAnswer:
        scripted = self._log("check", device)
        return scripted if scripted is not None else CheckAnswer(JobAnswer.OK, "fake site", {"device": device})

    def close(self) -> None:
        pass
