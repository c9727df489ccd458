"""Use cases on an instance directory: read its status, ask its wrapper to terminate the worker."""

from __future__ import annotations

from typing import Any

from dunscaith.domain.model.remote.control import (
    OUTCOME,
    InstanceRecords,
    TerminateRequest,
    mismatch,
    terminate_arguments_problem,
)
from dunscaith.domain.model.remote.errors import BadTerminateArguments
from dunscaith.domain.model.remote.state import Answer, answer_to, status_object
from dunscaith.ports.clock import Clock
from dunscaith.ports.instance_files import InstanceFiles

POLL_SECONDS = 0.05


class ReadStatus:
    def __init__(self, files: InstanceFiles) -> None:
        self.files = files

    def __call__(self) -> dict[str, Any]:
        live, records = self.files.read()
        return status_object(self.files.location, live, records)


class TerminateInstance:
    """Write one termination request when a live wrapper holds the instance and no request; report its answer.

    A repeated call (the same request in place) writes nothing and reports that request's answer. While
    another request is admitted, the call writes nothing and answers UNREQUESTED. Without a live
    wrapper nothing is written and nothing is signalled: only the files are consulted. Arguments out of
    range (``terminate_arguments_problem``) are refused before anything is read.
    """

    def __init__(self, files: InstanceFiles, clock: Clock) -> None:
        self.files = files
        self.clock = clock

    def __call__(self, grace_seconds: float, wait_seconds: float, nonce: str | None = None) -> Answer:
        problem = terminate_arguments_problem(grace_seconds, wait_seconds, nonce)
        if problem is not None:  # before the directory is read: the answer must not depend on its state
            raise BadTerminateArguments(problem)
        deadline = self.clock.monotonic() + wait_seconds
        live, records = self._await_instance(deadline)
        if records.instance is None:
            return Answer.UNREQUESTED
        own_id = records.instance.id if nonce is None else records.instance.id._replace(nonce=nonce)
        own = TerminateRequest(own_id, float(grace_seconds))
        refused_before = self._place_request(own, live, records, deadline)
        if refused_before is None:
            return Answer.UNREQUESTED
        return self._await_answer(own, refused_before, deadline)

    def _await_instance(self, deadline: float) -> tuple[bool, InstanceRecords]:
        """The directory's state once its instance is recorded, or its run has failed, or no wrapper is live
        (right after `run` started, the instance is not recorded yet), or at the deadline."""
        live, records = self.files.read()
        while records.instance is None and records.failure is None and live:
            if self.clock.monotonic() >= deadline:
                break
            self.clock.sleep(POLL_SECONDS)
            live, records = self.files.read()
        return live, records

    def _place_request(self, own: TerminateRequest, live: bool, records: InstanceRecords,
                       deadline: float) -> set[int] | None:
        """Make ``own`` the request in place, once: the refusals seen before it was written (to tell its own
        refusal from older ones), or None when it cannot be placed (``_request_shut_out``), or a foreign
        request is still not refused at the deadline."""
        refused_before = {r.number for r in records.refused}
        while records.request != own:  # ours, written by this call or an earlier one: wait for its answer
            if _request_shut_out(live, records):
                return None
            if records.request is None:
                refused_before = {r.number for r in records.refused}
                if self.files.publish_request(own):
                    return refused_before
            elif self.clock.monotonic() >= deadline:  # a foreign request the wrapper has yet to refuse
                return None
            else:
                self.clock.sleep(POLL_SECONDS)
            live, records = self.files.read()
        return refused_before

    def _await_answer(self, own: TerminateRequest, refused_before: set[int], deadline: float) -> Answer:
        while True:
            live, records = self.files.read()
            answer = answer_to(own, records, refused_before)
            if answer is not None:
                return answer
            if not _may_still_answer(live, records) or self.clock.monotonic() >= deadline:
                return Answer.UNANSWERED
            self.clock.sleep(POLL_SECONDS)


def _may_still_answer(live: bool, records: InstanceRecords) -> bool:
    return live and records.outcome is None


def _request_shut_out(live: bool, records: InstanceRecords) -> bool:
    """No request of ours is written, now or later: another request is admitted (and it stays), no wrapper
    is live, the run has its outcome or failed, or the worker has ended and only its outcome waits to be
    written."""
    if records.request is not None:
        assert records.instance is not None  # read once before the request was made, and never removed
        if mismatch(records.request, records.instance) is None:
            return True
    if not live or records.outcome is not None or records.failure is not None:
        return True
    return records.blocked is not None and records.blocked.file == OUTCOME
