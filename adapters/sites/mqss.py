"""MqssSite: the Munich Quantum Portal (MQSS) REST API, over httpx.

The address is a constant here, never a setting: no flag and no variable moves it (tests give
another through the container). The token goes only to that address: no redirect is followed,
the environment's proxies and netrc are not read, and every request is relative to the base. One
request per call, never retried: a job-making request whose answer is lost leaves a lost order.
Answers are classified as the MQSS site page says: 401 and 403 are refusals, anything else that is
not a success means a job may exist.
"""

from __future__ import annotations

from datetime import datetime
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
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName, Step
from dunscaith.domain.model.strict_json import loads_bounded
from dunscaith.ports.site import JobRequest

MQSS_BASE_URL = "https://portal.quantum.lrz.de:4000/v1/"
TIMESTAMP = "%Y-%m-%d %H:%M:%S.%f"
PHASES = {
    "PENDING": Phase.WAITING,
    "WAITING": Phase.WAITING,
    "COMPLETED": Phase.COMPLETED,
    "FAILED": Phase.FAILED,
    "CANCELLED": Phase.CANCELLED,
}




def _seconds(body: dict[str, Any]) -> float | None:
    try:
        start = datetime.strptime(body["timestamp_scheduled"], TIMESTAMP)
        end = datetime.strptime(body["timestamp_completed"], TIMESTAMP)
    except (KeyError, TypeError, ValueError):
        return None
    return max(0.0, (end - start).total_seconds())


class MqssSite:
    name = SiteName.MQSS
    steps: tuple[Step, ...] = (Step.CREATE,)

    def __init__(self, token: str, base_url: str = MQSS_BASE_URL, timeout: float = 30.0) -> None:
        self._client = fixed_client(
            base_url, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, timeout)
        self._refusals = TRAITS[SiteName.MQSS].refusal_statuses

    def _send(self, method: str, path: str, body: Any = None) -> httpx.Response | NoAnswer:
        return send(self._client, method, path, json=body)

    def prepare(self, device: str) -> JobRequestAnswer:
        return JobRequestAnswer(JobAnswer.OK)

    def create(self, request: JobRequest) -> JobRequestAnswer:
        body = {"circuit": request.circuit, "circuit_format": "qasm", "resource_name": request.device,
                "shots": request.shots, "no_modify": False, "queued": True}
        response = self._send("POST", "job", body)
        data = json_or_none(response)
        uuid = data.get("uuid") if isinstance(data, dict) else None
        return job_answer(response, self._refusals, uuid if isinstance(uuid, str) and uuid else None, " with no job id")

    def upload(self, job: str, request: JobRequest) -> JobRequestAnswer:
        raise NotImplementedError("MQSS makes a job in one request")

    def submit(self, job: str) -> JobRequestAnswer:
        raise NotImplementedError("MQSS makes a job in one request")

    def state(self, job: str) -> StateRead:
        response = self._send("GET", f"job/{quote(job, safe='')}/status")
        data = json_or_none(response)
        word = data.get("status") if isinstance(data, dict) else None
        phase = PHASES.get(word) if isinstance(word, str) else None
        failed = read_failure(response, phase is not None, ", unreadable state")
        if failed is not None:
            return StateRead(failed[0], detail=failed[1])
        return StateRead(ReadKind.GOOD, phase, word)

    def result(self, job: str) -> ResultRead:
        response = self._send("GET", f"job/{quote(job, safe='')}/result")
        data = json_or_none(response)
        failed = read_failure(response, isinstance(data, dict) and "result" in data, ", malformed result")
        if failed is not None:
            return ResultRead(failed[0], detail=failed[1])
        assert isinstance(data, dict)
        raw = data["result"]
        if raw is None or raw in ("", "None"):
            return ResultRead(ReadKind.GOOD, ready=False, detail="no result yet")
        try:
            counts = loads_bounded(raw) if isinstance(raw, str) else raw
        except ValueError:
            return ResultRead(ReadKind.ENDS, detail="malformed result (not JSON)")
        if not isinstance(counts, dict | list):
            return ResultRead(ReadKind.ENDS, detail="malformed result (not counts)")
        return ResultRead(ReadKind.GOOD, True, _seconds(data), counts)

    def check(self, device: str) -> CheckAnswer:
        path = f"resources/{quote(device, safe='')}" if device else "resources"
        response = self._send("GET", path)
        if isinstance(response, NoAnswer):
            return CheckAnswer(JobAnswer.UNKNOWN, response.detail)
        if response.status_code in self._refusals:
            return CheckAnswer(JobAnswer.REFUSED, f"the token was refused ({describe(response)})")
        data = json_or_none(response)
        if not response.is_success or not isinstance(data, dict) or "ERROR" in data:
            return CheckAnswer(JobAnswer.UNKNOWN, f"device {device} not confirmed ({describe(response)})")
        if not device:
            return CheckAnswer(JobAnswer.OK, f"the token is accepted; devices: {', '.join(sorted(data))}")
        facts = {"qubits": data.get("qubits")} if "qubits" in data else {}
        return CheckAnswer(JobAnswer.OK, f"the token is accepted; device {device} is known", facts)

    def close(self) -> None:
        self._client.close()
