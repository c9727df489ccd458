"""PiastqSite: Piast-Q (PCSS, Poznań) through PCSS's Open QAPI, as pcss-qapi 0.3.2 reaches it, over httpx.

One request makes the job: ``POST qdmi/`` answered ``{"id": <int>}``. ``GET jobs/{id}`` gives its state
and, once done, its result. The key goes in ``X-API-Key`` to the fixed address below only: no redirect
is followed (the PCSS client follows them; this app must not), no proxy or netrc is read, no request is
retried. 401 and 403 are refusals; any other answer that is not a success means a job may exist.

Piast-Q has no job list: a lost order is resolved from what PCSS tells you. The site gives no device
time, so a completed job records no seconds and counts at job_seconds_limit in the budget.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from urllib.parse import quote

import httpx

from dunscaith.adapters.sites.http_common import describe, fixed_client, job_answer, json_or_none, read_failure, send
from dunscaith.domain.model.qdevices.answers import (
    CheckAnswer,
    JobAnswer,
    JobRequestAnswer,
    NoAnswer,
    Phase,
    ReadKind,
    ResultRead,
    StateRead,
)
from dunscaith.domain.model.qdevices.programs import PiastqFormat
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName, Step
from dunscaith.ports.site import JobRequest

PIASTQ_BASE_URL = "https://open-qapi.quantum.pcss.pl/api/"

# The one table of what Piast-Q's answers mean, its words read in lower case. pcss-qapi 0.3.2 names
# only "failed" and "canceled" (both errors) and ends its wait at a non-null "result". The public API
# names none of the answers below marked (seed): they are seed 002's names, mapped here until PCSS
# confirms them (ask PCSS); "queued", "running" and "completed" are the words of PCSS's task API.
STATES: dict[str, Phase] = {
    "new": Phase.WAITING,  # (seed) made, not yet taken by the machine: New for days may be resolved --none
    "queued": Phase.WAITING,
    "pending": Phase.WAITING,
    "running": Phase.WAITING,
    "completed": Phase.COMPLETED,
    "failed": Phase.FAILED,
    "canceled": Phase.CANCELLED,
    "cancelled": Phase.CANCELLED,
    "result_expired": Phase.COMPLETED,  # (seed) the job ran, and the site no longer holds its result
}
RESULT_EXPIRED = "result_expired"  # (seed) as a status word, or as the detail of an error answer
TOO_MANY_CONNECTIONS = "too many connections"  # (seed) in an answer's text that gives no state, any status
TOO_MANY_STATUSES = frozenset({429})  # (seed) the usual status of that answer: a missed poll too
QASM3 = "OPENQASM 3"
WAIT_TIMEOUT = 5  # pcss-qapi 0.3.2 sends "wait_timeout": 5 with every job


def _text(response: httpx.Response) -> str:
    try:
        return response.text.lower()
    except (UnicodeDecodeError, httpx.ResponseNotRead):
        return ""


def _expired(response: httpx.Response, data: Any) -> bool:
    if not isinstance(data, dict):
        return False
    words = [data.get("status"), data.get("detail")]
    return any(isinstance(w, str) and w.lower() == RESULT_EXPIRED for w in words)


def _counts(result: Any) -> dict[str, int] | None:
    """``{"results": {"Tasks": [bitstring, ...]}}`` (one bitstring a shot) as counts."""
    tasks = result.get("results", {}).get("Tasks") if isinstance(result, dict) and isinstance(
        result.get("results"), dict) else None
    if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
        return None
    return dict(sorted(Counter(tasks).items()))


class PiastqSite:
    name = SiteName.PIASTQ
    steps: tuple[Step, ...] = (Step.CREATE,)

    def __init__(self, token: str, base_url: str = PIASTQ_BASE_URL, timeout: float = 30.0,
                 program_format: PiastqFormat = PiastqFormat.CUSTOM1) -> None:
        self._client = fixed_client(base_url, {"X-API-Key": token}, timeout)
        self._format = PiastqFormat(program_format)
        self._refusals = TRAITS[SiteName.PIASTQ].refusals(Step.CREATE)

    def __repr__(self) -> str:  # a traceback that shows locals must not show the key
        return "PiastqSite()"

    def prepare(self, device: str) -> JobRequestAnswer:
        return JobRequestAnswer(JobAnswer.OK)

    def _body(self, request: JobRequest) -> dict[str, Any]:
        """The job request's body, key for key as pcss-qapi 0.3.2's ``PIAST_Q.submit`` posts it: with
        custom1, ``request.circuit`` is the AQT circuit's JSON (domain/model/qdevices/programs.py)."""
        if self._format is PiastqFormat.CUSTOM1:
            fmt, program = "custom1", json.loads(request.circuit)
        else:
            fmt = "qasm3" if request.circuit.lstrip("\ufeff \t\r\n").startswith(QASM3) else "qasm2"
            program = request.circuit
        return {"device": request.device, "device_name": request.device, "shots": request.shots,
                "session_id": None, "label_session_id": None, "format": fmt, "program": program,
                "wait_timeout": WAIT_TIMEOUT}

    def create(self, request: JobRequest) -> JobRequestAnswer:
        body = self._body(request)
        response = send(self._client, "POST", "qdmi/", json=body)
        data = json_or_none(response)
        raw = data.get("id") if isinstance(data, dict) else None
        job = str(raw) if (isinstance(raw, int) and not isinstance(raw, bool)) or (isinstance(raw, str) and raw) \
            else None
        return job_answer(response, self._refusals, job, " with no job id")

    def upload(self, job: str, request: JobRequest) -> JobRequestAnswer:
        raise NotImplementedError("Piast-Q makes a job in one request")

    def submit(self, job: str) -> JobRequestAnswer:
        raise NotImplementedError("Piast-Q makes a job in one request")

    def _read(self, job: str) -> tuple[ReadKind, Any, str]:
        """One ``GET jobs/{id}``: the read's kind, the body, and why it is not good."""
        response = send(self._client, "GET", f"jobs/{quote(job, safe='')}")
        if isinstance(response, NoAnswer):
            return ReadKind.MISSED, None, response.detail
        data = json_or_none(response)
        has_status = isinstance(data, dict) and isinstance(data.get("status"), str)
        if response.status_code in TOO_MANY_STATUSES or (
                not has_status and TOO_MANY_CONNECTIONS in _text(response)):
            return ReadKind.MISSED, None, f"{describe(response)}: too many connections"
        if _expired(response, data):
            return ReadKind.GOOD, {"status": RESULT_EXPIRED, "result": None}, ""
        failed = read_failure(response, has_status, ", no status")
        if failed is not None:
            return failed[0], None, failed[1]
        return ReadKind.GOOD, data, ""

    def state(self, job: str) -> StateRead:
        kind, data, detail = self._read(job)
        if kind is not ReadKind.GOOD:
            return StateRead(kind, detail=detail)
        word = data["status"]
        phase = Phase.COMPLETED if data.get("result") is not None else STATES.get(word.lower())
        if phase is None:
            return StateRead(ReadKind.ENDS, detail=f"unknown state {word!r}")
        return StateRead(ReadKind.GOOD, phase, word)

    def result(self, job: str) -> ResultRead:
        kind, data, detail = self._read(job)
        if kind is not ReadKind.GOOD:
            return ResultRead(kind, detail=detail)
        if data["status"] == RESULT_EXPIRED:
            return ResultRead(ReadKind.ENDS, detail="result_expired", expired=True)
        if data.get("result") is None:
            return ResultRead(ReadKind.GOOD, ready=False, detail="no result yet")
        counts = _counts(data["result"])
        if counts is None:
            return ResultRead(ReadKind.ENDS, detail="malformed result (no Tasks)")
        return ResultRead(ReadKind.GOOD, True, None, counts)

    def check(self, device: str) -> CheckAnswer:
        response = send(self._client, "GET", "me/token-info")
        if isinstance(response, NoAnswer):
            return CheckAnswer(JobAnswer.UNKNOWN, response.detail)
        if response.status_code in self._refusals:
            return CheckAnswer(JobAnswer.REFUSED, f"the key was refused ({describe(response)})")
        if not response.is_success:
            return CheckAnswer(JobAnswer.UNKNOWN, f"token-info: {describe(response)}")
        devices = send(self._client, "GET", "devices/")
        data = json_or_none(devices) if not isinstance(devices, NoAnswer) else None
        machines = data.get("machines") if isinstance(data, dict) else None
        names = sorted(str(m.get("name")) for m in machines if isinstance(m, dict)) if isinstance(machines, list) \
            else None
        if names is None:
            why = devices.detail if isinstance(devices, NoAnswer) else describe(devices)
            return CheckAnswer(JobAnswer.UNKNOWN, f"the key is accepted; devices not read ({why})")
        if device and device not in names:
            return CheckAnswer(JobAnswer.UNKNOWN, f"the key is accepted; device {device} is not listed "
                               f"(devices: {', '.join(names)})")
        return CheckAnswer(JobAnswer.OK, f"the key is accepted; devices: {', '.join(names)}", {"devices": names})

    def close(self) -> None:
        self._client.close()
