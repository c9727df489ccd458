"""A fake MQSS (Munich Quantum Portal) site: a real HTTP server on 127.0.0.1 with scripted faults.

It follows the public client API (notes/quantum-sites.md §3): every path is relative to ``/v1/``, the
token goes in ``Authorization: Bearer <token>``, bodies are JSON.

    with FakeMqss(token="t0k3n") as site:
        site.base_url      # "http://127.0.0.1:PORT/v1/", like MQP_DEFAULT_URL ".../v1/" of the real site
        site.origin        # "http://127.0.0.1:PORT"
        site.token
        site.script("submit", "drop_after_create")       # the next POST job makes a job, then no answer
        site.script("status", "server_error", times=2, status=503)
        ...
        site.journal       # every request: seq, time, method, path, query, headers (authorization kept), body,
                           # kind, fault, status sent (None: no answer), authorized
        site.jobs          # {uuid: MqssJob} made so far (editable: state, path, result, seconds)
        site.requests("submit")            # the journal entries of one kind
        site.job_making_requests()         # POST job + POST hamiltonian_job received, answered or not
        site.token_seen_outside_authorization()  # entries with the token in a path, query, body or other header
        site.add_job(state="COMPLETED")    # a job the site has that no request of the test made
        site.pending_faults("status")      # scripted faults not used yet
        site.trap.journal, site.trap.saw_token   # the redirect trap (another port)

Routes and their kinds (the name ``script`` takes):

=====================  ==========================================  ==============================================
kind                   request                                     normal answer
=====================  ==========================================  ==============================================
``resources``          ``GET resources``                           ``{name: {"qubits", "connectivity",
                                                                   "instructions"}}``
``resource``           ``GET resources/{name}``                    that resource's object; unknown: 404 text
                                                                   ``RESOURCE NOT FOUND``
``pending_jobs``       ``GET resources/{name}/num_pending_jobs``   ``{"num_pending_jobs": n}``
``submit``             ``POST job``                                ``{"uuid": id}``; makes a job (PENDING)
``hamiltonian``        ``POST hamiltonian_job``                    ``{"uuid": id}``; makes a job
``status``             ``GET job/{uuid}/status``                   ``{"status": S}``; moves the job on (below)
``result``             ``GET job/{uuid}/result``                   ``{"result": "<JSON text>", "timestamp_submitted",
                                                                   "timestamp_scheduled", "timestamp_completed"}``
``stats``              ``GET job/{uuid}/stats``                    ``{"uuid", "shots", "state", "seconds"}``
``cancel_reason``      ``GET job/{uuid}/cancel_reason``            ``{"cancel_reason": str}``
``cancel``             ``DELETE job/{uuid}``                       ``{}``; the job becomes CANCELLED (the app must
                                                                   never send it: assert ``requests("cancel") == []``)
``list``               ``GET job``                                 404 unless ``job_list=True`` (unconfirmed route):
                                                                   ``{"jobs": [uuid, ...]}``
``unknown``            anything else                               404 ``{"detail": "Not Found"}``
=====================  ==========================================  ==============================================

The job routes answer under ``hamiltonian_job/{uuid}/...`` too, with the same kinds.

A request without ``Authorization: Bearer <token>`` gets 401 ``{"detail": "Unauthorized"}`` and no effect.
``POST job`` with a body that is not the six fields of the client (circuit, circuit_format, resource_name,
shots, no_modify, queued) gets 400, an unknown resource 404 ``RESOURCE NOT FOUND``; no job is made. The real
site's codes for these are not documented: these answers are this fake's choice.

States: a job starts PENDING and follows ``path`` (default PENDING → WAITING → COMPLETED). Each
``reads_per_state`` status reads of a job it moves one step on, so the first read shows PENDING, and a wait
loop always ends at the last state of the path (use ``path=("PENDING", "WAITING", "FAILED")``, or
``("PENDING",)`` for a job that never leaves PENDING). The result is ``{"result": null, ...}`` until the job is
COMPLETED, then the counts as JSON text (``{"00": n, "11": m}`` by default, or ``result=`` given); the
timestamps are ``%Y-%m-%d %H:%M:%S.%f`` ("" before they happen), and completed - scheduled = ``job_seconds``.

Faults (``site.script(kind, fault, times=1, **options)``): applied to the next ``times`` requests of that
kind, in the order queued; then normal service resumes. The transport faults come before the token check
(a request with a wrong token gets them too); ``no_result_yet`` and ``malformed_result`` come after it.

=====================  ==========================================================================================
fault                  what the client sees
=====================  ==========================================================================================
``refuse``             401 (``status=403`` for 403); nothing made
``server_error``       500 (``status=503`` ...); nothing made (``commit=True``: the job is made, then the 5xx)
``too_many``           429 with ``Retry-After: 1``; nothing made
``redirect``           302 (``status=`` 301/303/307/308) to the same path on the trap server (``site.trap``);
                       nothing made. The trap answers 200 like a site and records whether it saw the token.
``answer``             any ``status`` with ``body`` (JSON) or ``raw`` (bytes); nothing made (``commit=True``: made)
``drop``               the connection closed with no answer (``reset=True``: a TCP reset); nothing made
``drop_after_create``  the request takes effect (the job IS made; a status read moves the job), then the
                       connection is closed with no answer (``reset=True``: a reset)
``half_body``          the request takes effect, the answer's headers announce the whole body, half is sent,
                       then the connection closes
``no_job_id``          the request takes effect, the answer is 200 ``{}`` (``body=`` another JSON value)
``hang``               no answer until ``seconds`` (default the site's ``hang_seconds``, 10 s) pass or the fake
                       stops, then the connection closes. The request takes effect first (``commit=False``:
                       it does not), so a hang on submit leaves a job the client does not know
``no_result_yet``      (result) the job is COMPLETED but the answer has ``"result": null`` (``value="None"`` or
                       ``""`` for the other forms the client knows) and empty timestamps
``malformed_result``   (result) 200 with a ``result`` text that is not JSON (``body=`` a whole other JSON
                       answer, ``raw=`` bytes that are not JSON at all)
=====================  ==========================================================================================
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.harness import Answer, FakeSite, Fault, Route

STATES = ("PENDING", "WAITING", "COMPLETED", "FAILED", "CANCELLED")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
SUBMIT_FIELDS = {
    "circuit": str,
    "circuit_format": str,
    "resource_name": str,
    "shots": int,
    "no_modify": bool,
    "queued": bool,
}
DEFAULT_RESOURCES: dict[str, dict[str, Any]] = {
    "Q5": {
        "qubits": 5,
        "connectivity": "[[0, 1], [1, 2], [2, 3], [3, 4]]",
        "instructions": "[('rx', None), ('ry', None), ('cz', None), ('measure', None)]",
    },
    "AQT20": {
        "qubits": 20,
        "connectivity": "[]",
        "instructions": "[('r', None), ('rz', None), ('rxx', None), ('measure', None)]",
    },
}


@dataclass
class MqssJob:
    uuid: str
    resource_name: str
    shots: int
    circuit: str
    circuit_format: str
    path: tuple[str, ...]
    seconds: float
    created: datetime
    result: Any = None  # the counts as a JSON value; None: made from the shots
    state_index: int = 0
    status_reads: int = 0
    cancel_reason: str = ""
    body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return self.path[self.state_index]

    @state.setter
    def state(self, value: str) -> None:
        if value not in STATES:
            raise ValueError(f"unknown state {value!r}")
        if value not in self.path:
            self.path = (*self.path, value)
        self.state_index = self.path.index(value)

    def counts(self) -> Any:
        if self.result is not None:
            return self.result
        return {"00": self.shots // 2, "11": self.shots - self.shots // 2}

    def timestamps(self) -> dict[str, str]:
        scheduled = self.created + timedelta(seconds=1)
        completed = scheduled + timedelta(seconds=self.seconds)
        past_pending = self.state != "PENDING"
        return {
            "timestamp_submitted": self.created.strftime(TIME_FORMAT),
            "timestamp_scheduled": scheduled.strftime(TIME_FORMAT) if past_pending else "",
            "timestamp_completed": completed.strftime(TIME_FORMAT) if self.state == "COMPLETED" else "",
        }


class FakeMqss(FakeSite):
    """The Munich Quantum Portal API on loopback. See the module docstring for routes, states and faults."""

    KINDS = frozenset(
        {
            "resources",
            "resource",
            "pending_jobs",
            "submit",
            "hamiltonian",
            "status",
            "result",
            "stats",
            "cancel_reason",
            "cancel",
            "list",
            "unknown",
        }
    )
    RESULT_FAULTS = frozenset({"no_result_yet", "malformed_result"})

    def __init__(
        self,
        token: str = "mqss-test-token",
        *,
        path: tuple[str, ...] = ("PENDING", "WAITING", "COMPLETED"),
        reads_per_state: int = 1,
        job_seconds: float = 2.5,
        result: Any = None,
        resources: Mapping[str, Mapping[str, Any]] | None = None,
        job_list: bool = False,
        hang_seconds: float = 10.0,
    ) -> None:
        super().__init__(token, hang_seconds=hang_seconds)
        if not path or any(s not in STATES for s in path):
            raise ValueError(f"a path is a non-empty sequence of {STATES}")
        if reads_per_state < 1:
            raise ValueError("reads_per_state must be 1 or more")
        self.path = tuple(path)
        self.reads_per_state = reads_per_state
        self.job_seconds = job_seconds
        self.result = result
        self.resources = {k: dict(v) for k, v in (resources or DEFAULT_RESOURCES).items()}
        self.job_list = job_list
        self._jobs: dict[str, MqssJob] = {}
        self._jobs_lock = threading.Lock()
        self._ids = itertools.count(1)

    def __enter__(self) -> FakeMqss:
        self.start()
        return self

    @property
    def base_url(self) -> str:
        return self.origin + "/v1/"

    @property
    def jobs(self) -> dict[str, MqssJob]:
        with self._jobs_lock:
            return dict(self._jobs)

    def add_job(self, resource_name: str = "Q5", shots: int = 100, state: str = "PENDING") -> MqssJob:
        """A job made at the site by someone else (or by a request whose answer was lost)."""
        job = self._make_job({"resource_name": resource_name, "shots": shots, "circuit": "", "circuit_format": "qasm"})
        job.state = state
        return job

    def job_making_requests(self) -> int:
        """How many requests that make a job the fake received (answered or not)."""
        return len(self.requests("submit", "hamiltonian"))

    # -- routes ----------------------------------------------------------------------------------
    def kinds(self) -> frozenset[str]:
        return self.KINDS

    def extra_faults(self) -> frozenset[str]:
        return self.RESULT_FAULTS

    def script(self, kind: str, fault: str, times: int = 1, **options: Any) -> None:
        if fault in self.RESULT_FAULTS and kind != "result":
            raise ValueError(f"{fault} applies to the result request only")
        super().script(kind, fault, times, **options)

    def route(self, method: str, path: str) -> Route:
        if not path.startswith("/v1/"):
            return Route("unknown")
        parts = path[len("/v1/") :].split("/")
        match method, parts:
            case "GET", ["resources"]:
                return Route("resources")
            case "GET", ["resources", name]:
                return Route("resource", (name,))
            case "GET", ["resources", name, "num_pending_jobs"]:
                return Route("pending_jobs", (name,))
            case "POST", ["job"]:
                return Route("submit")
            case "POST", ["hamiltonian_job"]:
                return Route("hamiltonian")
            case "GET", ["job"]:
                return Route("list")
            case "GET", ["job" | "hamiltonian_job", uuid, ("status" | "result" | "stats" | "cancel_reason") as what]:
                return Route(what, (uuid,))
            case "DELETE", ["job" | "hamiltonian_job", uuid]:
                return Route("cancel", (uuid,))
        return Route("unknown")

    # -- answers ---------------------------------------------------------------------------------
    def serve(self, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer:
        kind = route.kind
        if kind == "resources":
            return Answer(200, self.resources)
        if kind in ("resource", "pending_jobs"):
            name = route.args[0]
            if name not in self.resources:
                return Answer(404, raw=b"RESOURCE NOT FOUND")
            if kind == "resource":
                return Answer(200, self.resources[name])  # the resource itself, as the client reads it
            waiting = sum(
                1 for j in self.jobs.values() if j.resource_name == name and j.state in ("PENDING", "WAITING")
            )
            return Answer(200, {"num_pending_jobs": waiting})
        if kind == "submit":
            return self._submit(body, SUBMIT_FIELDS)
        if kind == "hamiltonian":
            return self._submit(body, {"resource_name": str, "interaction_str": str, "coefficients_str": str})
        if kind == "list":
            if not self.job_list:
                return Answer(404, {"detail": "Not Found"})
            return Answer(200, {"jobs": list(self.jobs)})
        if kind == "unknown":
            return Answer(404, {"detail": "Not Found"})
        job = self.jobs.get(route.args[0])
        if job is None:
            return Answer(404, {"detail": "job not found"})
        if kind == "status":
            return Answer(200, {"status": self._read_status(job)})
        if kind == "result":
            return Answer(200, self._result(job))
        if kind == "stats":
            return Answer(200, {"uuid": job.uuid, "shots": job.shots, "state": job.state, "seconds": job.seconds})
        if kind == "cancel_reason":
            return Answer(200, {"cancel_reason": job.cancel_reason})
        # cancel: the app must never send it; the fake does what the site would.
        job.state = "CANCELLED"
        job.cancel_reason = "cancelled by user"
        return Answer(200, {})

    def fault_answer(self, fault: Fault, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer | None:
        job = self.jobs.get(route.args[0]) if route.args else None
        if job is None:
            return None
        if fault.name == "no_result_yet":
            value = fault.options.get("value")
            return Answer(200, {"result": value, **dict.fromkeys(job.timestamps(), "")})
        # malformed_result
        if "raw" in fault.options:
            return Answer(200, raw=bytes(fault.options["raw"]))
        if "body" in fault.options:
            return Answer(200, fault.options["body"])
        return Answer(200, {"result": "{'00': 5, '11'", **job.timestamps()})

    def _submit(self, body: bytes, fields: Mapping[str, type]) -> Answer:
        try:
            request = json.loads(body)
        except ValueError:
            return Answer(400, {"detail": "body is not JSON"})
        if not isinstance(request, dict) or set(request) != set(fields):
            return Answer(400, {"detail": f"expected the fields {sorted(fields)}"})
        for name, kind in fields.items():
            value = request[name]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                return Answer(400, {"detail": f"{name} must be {kind.__name__}"})
        if request.get("shots", 1) < 1:
            return Answer(400, {"detail": "shots must be 1 or more"})
        if request["resource_name"] not in self.resources:
            return Answer(404, raw=b"RESOURCE NOT FOUND")
        job = self._make_job(request)
        return Answer(200, {"uuid": job.uuid})

    def _make_job(self, request: Mapping[str, Any]) -> MqssJob:
        uuid = f"{next(self._ids):08d}-f4e3-4mqs-9fak-{int(time.time() * 1000) % 10**12:012d}"
        job = MqssJob(
            uuid=uuid,
            resource_name=str(request.get("resource_name", "")),
            shots=int(request.get("shots", 0) or 0),
            circuit=str(request.get("circuit", "")),
            circuit_format=str(request.get("circuit_format", "")),
            path=self.path,
            seconds=self.job_seconds,
            created=datetime.now(UTC),
            result=self.result,
            body=dict(request),
        )
        with self._jobs_lock:
            self._jobs[uuid] = job
        return job

    def _read_status(self, job: MqssJob) -> str:
        # The job moves on at a read, so it is never further on than the last read showed.
        with self._jobs_lock:
            due = job.status_reads > 0 and job.status_reads % self.reads_per_state == 0
            if due and job.state_index < len(job.path) - 1:
                job.state_index += 1
            job.status_reads += 1
            return job.state

    def _result(self, job: MqssJob) -> dict[str, Any]:
        stamps = job.timestamps()
        if job.state != "COMPLETED":
            return {"result": None, **stamps}
        return {"result": json.dumps(job.counts()), **stamps}
