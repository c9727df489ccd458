"""A fake Piast-Q (PCSS) site: PCSS's Open QAPI on loopback, as pcss-qapi 0.3.2 speaks it, with scripted faults.

The current PCSS client (notes/quantum-sites.md §2.0) gives the routes and shapes: ``X-API-Key``,
``POST /qdmi/`` → ``{"id": <int>}``, ``GET /jobs/{id}`` → ``{"status", "result"}``. What the client does not
show (the state ``New`` before a job runs, the "too many connections" answer, the expiry of a result) is
played with the names seed 002 gives them. These are placeholders until PCSS confirms them.

    with FakePiastq(token=key) as site:
        site.base_url      # "http://127.0.0.1:PORT/api/"  (the real one: https://open-qapi.quantum.pcss.pl/api)
        site.script("status", "too_many_connections", times=3)
        site.journal, site.jobs, site.requests("submit"), site.trap

The key goes in ``X-API-Key: <key>``; a wrong or missing key gets 401, and ``disabled=True`` (an account not
allowed at the moment) 403.

==================  ==========================================  ==============================================
kind                request                                     normal answer
==================  ==========================================  ==============================================
``token_info``      ``GET me/token-info``                       ``{"username", "group_name"}``
``devices``         ``GET devices/``                            ``{"machines": [{"name": "PIAST-Q", ...}]}``
``usage``           ``GET me/usage``                            ``{"group": {...}, "member": {...}}``
``submit``          ``POST qdmi/`` ``{"device", "shots",        ``{"id": n}``; makes a job
                    "format", "program", ...}``
``status``          ``GET jobs/{id}``                           ``{"id", "status": S, "result": null}``, then
                                                                ``{"status": "completed", "result":
                                                                {"results": {"Tasks": [bitstring, ...]}}}``;
                                                                moves the job on
``list``            ``GET jobs/``                               405: Piast-Q has no job list
``cancel``          ``POST jobs/{id}/cancel``                   ``{}``; canceled (the app must never send it)
``unknown``         anything else                               404
==================  ==========================================  ==============================================

States: a job follows ``path`` (default New → queued → running → completed), one step every
``reads_per_state`` reads, moving at the read; ``path=("New",)`` stays New for ever. ``failed`` and
``canceled`` (the client's words) end it with no result.

Result expiry: a job with ``expired`` set (or every job, with ``expire_results=True``) answers, once
completed, with the expiry signal: ``expiry="status"`` (default) is 200 ``{"status": "result_expired",
"result": null}``; ``expiry="detail"`` is ``expiry_status`` (410) ``{"detail": "result_expired"}``.

Too many connections: the fault ``too_many_connections`` answers ``too_many_status`` (429) with body
``{"detail": "too many connections"}``. With ``max_open=N`` the fake gives that answer by itself to any
request that finds N others still open (the journal marks it ``too_many_connections``).

Job ids: ``id_factory`` (a callable) makes each id, e.g. ``lambda n: "a\\nb"`` for an id no URL can hold.

Faults: the harness's (refuse, server_error, too_many, redirect, answer, drop, drop_after_create,
half_body, no_job_id, hang) plus ``too_many_connections``.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from tests.fakes.harness import Answer, FakeSite, Fault, Route

STATES = ("New", "queued", "running", "completed", "failed", "canceled")
# A Bell pair in AQT's gates, as qiskit-aqt-provider 1.15.0 makes it from OpenQASM (R, RXX, RZ, R, R, MEASURE).
BELL_AQT: dict[str, Any] = {"number_of_qubits": 2, "quantum_circuit": [
    {"operation": "R", "qubit": 0, "phi": 0.0, "theta": 1.0}, {"operation": "RXX", "qubits": [0, 1], "theta": 0.5},
    {"operation": "RZ", "qubit": 0, "phi": -0.5}, {"operation": "R", "qubit": 0, "phi": 1.0, "theta": 0.5},
    {"operation": "R", "qubit": 1, "phi": 1.0, "theta": 0.5}, {"operation": "MEASURE"}]}


def bell_program(shots: int) -> str:
    """The program text of a Piast-Q order (what domain/model/qdevices/programs.py makes for PiastqSite)."""
    return json.dumps({"repetitions": shots, **BELL_AQT}, separators=(",", ":"))


CLIENT_KEYS = frozenset({"device", "device_name", "shots", "session_id", "label_session_id", "format", "program",
                         "wait_timeout"})


def _client_body_problem(request: Any, accept_qasm: bool) -> str:
    """Why ``request`` is not a body pcss-qapi 0.3.2 would send, or ''."""
    if not isinstance(request, dict) or set(request) != CLIENT_KEYS:
        keys = sorted(request) if isinstance(request, dict) else type(request).__name__
        return f"body keys {keys} are not the client's"
    shots = request["shots"]
    if not isinstance(request["device"], str) or request["device_name"] != request["device"]:
        return "device and device_name must name the device"
    if isinstance(shots, bool) or not isinstance(shots, int) or shots < 1:
        return "shots must be a positive whole number"
    if request["format"] in ("qasm2", "qasm3") and accept_qasm:
        return "" if isinstance(request["program"], str) and request["program"].startswith("OPENQASM") else \
            "program must be OpenQASM text"
    if request["format"] != "custom1":
        return f"format {request['format']!r} is not custom1"
    from aqt_connector.models.circuits import QuantumCircuit  # the client's own model of the program
    from pydantic import ValidationError

    try:
        circuit = QuantumCircuit.model_validate(request["program"])
    except ValidationError as exc:
        return f"program: {exc.errors()[0]['msg']}"
    if circuit.repetitions != shots:
        return "program repetitions must equal shots"
    return ""
DEVICE = "PIAST-Q"
DEVICES = (DEVICE,)


@dataclass
class PiastqJob:
    id: Any  # an int, as the site gives; a test may make it a string
    device: str
    shots: int
    request: Mapping[str, Any]
    path: tuple[str, ...]
    created: datetime
    result: Any = None
    expired: bool = False
    step: int = 0
    reads: int = 0

    @property
    def status(self) -> str:
        return self.path[self.step]

    def tasks(self) -> list[str]:
        if self.result is not None:
            return list(self.result)
        program = self.request.get("program")
        width = program.get("number_of_qubits", 2) if isinstance(program, dict) else 2
        half = self.shots // 2
        return ["0" * width] * half + ["1" * width] * (self.shots - half)


class FakePiastq(FakeSite):
    """PCSS's Open QAPI on loopback. See the module docstring for routes, states and faults."""

    KINDS = frozenset({"token_info", "devices", "usage", "submit", "status", "list", "cancel", "unknown"})

    def __init__(
        self,
        token: str = "pcss-test-key",
        *,
        disabled: bool = False,
        path: tuple[str, ...] = ("New", "queued", "running", "completed"),
        reads_per_state: int = 1,
        result: Any = None,
        expire_results: bool = False,
        accept_qasm: bool = False,
        expiry: str = "status",
        expiry_status: int = 410,
        too_many_status: int = 429,
        max_open: int | None = None,
        id_factory: Callable[[int], Any] | None = None,
        hang_seconds: float = 10.0,
    ) -> None:
        super().__init__(token, hang_seconds=hang_seconds)
        if expiry not in ("status", "detail"):
            raise ValueError("expiry is status or detail")
        if not path or any(s not in STATES for s in path) or reads_per_state < 1:
            raise ValueError(f"a path is a non-empty sequence of {STATES}; reads_per_state 1 or more")
        self.disabled = disabled
        self.path = tuple(path)
        self.reads_per_state = reads_per_state
        self.result = result
        self.expire_results = expire_results
        self.accept_qasm = accept_qasm
        self.expiry = expiry
        self.expiry_status = expiry_status
        self.too_many_status = too_many_status
        self.max_open = max_open
        self.id_factory = id_factory or (lambda n: n)
        self._jobs: dict[str, PiastqJob] = {}
        self._jobs_lock = threading.Lock()
        self._counter = itertools.count(4101)
        self._open = 0
        self._open_lock = threading.Lock()

    def __enter__(self) -> FakePiastq:
        self.start()
        return self

    @property
    def base_url(self) -> str:
        return self.origin + "/api/"

    @property
    def jobs(self) -> dict[str, PiastqJob]:
        """The jobs by their id as text (the key a URL carries)."""
        with self._jobs_lock:
            return dict(self._jobs)

    def job_making_requests(self) -> int:
        return len(self.requests("submit"))

    def kinds(self) -> frozenset[str]:
        return self.KINDS

    def extra_faults(self) -> frozenset[str]:
        return frozenset({"too_many_connections"})

    # -- auth --------------------------------------------------------------------------------------
    def authorized(self, handler: Any, route: Route) -> bool:
        return bool(handler.headers.get("X-API-Key") == self.token)

    def unauthorized(self) -> Answer:
        return Answer(401, {"detail": "Invalid API key"})

    def too_many_connections(self) -> Answer:
        return Answer(self.too_many_status, {"detail": "too many connections"})

    def handle(self, handler: Any, body: bytes) -> None:
        route = self.route(handler.command, handler.path.split("?")[0])
        with self._open_lock:
            self._open += 1
            over = self.max_open is not None and self._open > self.max_open
        try:
            disabled = self.disabled and route.kind != "unknown" and self.authorized(handler, route)
            if over or disabled:
                answer = self.too_many_connections() if over else Answer(403, {"detail": "account not authorized"})
                fault = "too_many_connections" if over else "disabled"
                authorized = self.authorized(handler, route)
                self._record(handler, body, kind=route.kind, fault=fault, status=answer.status, authorized=authorized)
                self._send(handler, answer)
                return
            super().handle(handler, body)
        finally:
            with self._open_lock:
                self._open -= 1

    # -- routes and answers ------------------------------------------------------------------------
    def route(self, method: str, path: str) -> Route:
        if not path.startswith("/api/"):
            return Route("unknown")
        rest = path[len("/api/") :]
        parts = [unquote(p) for p in rest.rstrip("/").split("/")]
        match method, parts:
            case "GET", ["me", "token-info"]:
                return Route("token_info")
            case "GET", ["me", "usage"]:
                return Route("usage")
            case "GET", ["devices"]:
                return Route("devices")
            case "POST", ["qdmi"]:
                return Route("submit")
            case "GET", ["jobs"]:
                return Route("list")
            case "GET", ["jobs", job]:
                return Route("status", (job,))
            case "POST", ["jobs", job, "cancel"]:
                return Route("cancel", (job,))
        return Route("unknown")

    def fault_answer(self, fault: Fault, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer | None:
        return self.too_many_connections()

    def serve(self, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer:
        kind = route.kind
        if kind == "submit":
            return self._submit(body)
        if kind == "token_info":
            return Answer(200, {"username": "tester", "group_name": "qdevices-tests", "expires_at": None})
        if kind == "devices":
            return Answer(200, {"machines": [{"name": d, "qubits": 20, "status": "online"} for d in DEVICES]})
        if kind == "usage":
            return Answer(200, {"group": {"used": 0, "quota": 10**9}, "member": {"used": 0, "quota": 10**9}})
        if kind == "list":
            return Answer(405, {"detail": "Method Not Allowed"})
        if kind == "unknown":
            return Answer(404, {"detail": "Not Found"})
        job = self.jobs.get(route.args[0])
        if job is None:
            return Answer(404, {"detail": "Job not found"})
        if kind == "status":
            return self._read(job)
        # cancel: never sent by the app; the fake does what the site would.
        with self._jobs_lock:
            job.path = (*job.path[: job.step + 1], "canceled")
            job.step = len(job.path) - 1
        return Answer(200, {})

    def _submit(self, body: bytes) -> Answer:
        """Only what pcss-qapi 0.3.2's ``PIAST_Q.submit`` sends is taken: its keys, ``"format": "custom1"``,
        ``"wait_timeout"``, and a ``program`` that aqt-connector's own ``QuantumCircuit`` model accepts with
        ``repetitions`` equal to ``shots``. Anything else is answered 422 (what the real site answers to a
        body it cannot use is not known: the app must never send one). ``accept_qasm`` also takes the
        older qasm2/qasm3 text body."""
        try:
            request = json.loads(body)
        except ValueError:
            return Answer(422, {"detail": "body is not JSON"})
        problem = _client_body_problem(request, self.accept_qasm)
        if problem:
            return Answer(422, {"detail": problem})
        if request["device"] not in DEVICES:
            return Answer(404, {"detail": "device not found"})
        n = next(self._counter)
        job = PiastqJob(self.id_factory(n), request["device"], request["shots"], request, self.path,
                        datetime.now(UTC), self.result)
        with self._jobs_lock:
            self._jobs[str(job.id)] = job
        return Answer(200, {"id": job.id})

    def _read(self, job: PiastqJob) -> Answer:
        with self._jobs_lock:
            due = job.reads > 0 and job.reads % self.reads_per_state == 0
            if due and job.step < len(job.path) - 1:
                job.step += 1
            job.reads += 1
            status = job.status
        if status != "completed":
            return Answer(200, {"id": job.id, "status": status, "result": None})
        if job.expired or self.expire_results:
            if self.expiry == "detail":
                return Answer(self.expiry_status, {"detail": "result_expired"})
            return Answer(200, {"id": job.id, "status": "result_expired", "result": None})
        return Answer(200, {"id": job.id, "status": status, "result": {"results": {"Tasks": job.tasks()}}})
