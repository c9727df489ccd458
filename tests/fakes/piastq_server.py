"""A fake Piast-Q (PCSS) site: the PCSS task API on loopback, with scripted faults.

The public PCSS client (pcss-qapi 0.1.3, notes/quantum-sites.md §2.2 and §4.3) gives the shape; what it
does not show (the state names past ``New``, the "too many connections" answer, the expiry of results)
is configurable here and named after the design. These are placeholders until PCSS confirms them.

    with FakePiastq(token=key) as site:
        site.base_url      # "http://127.0.0.1:PORT/api/open/"  (tasks, machines under it)
        site.script("status", "too_many_connections", times=3)
        site.journal, site.jobs, site.requests("submit"), site.trap

The key goes in ``X-API-Key: <key>`` (``auth="bearer"``: ``Authorization: Bearer <key>``, as in an older
client); a wrong key gets 401, and ``disabled=True`` (an account not allowed at the moment) 403.
``machines`` and ``health`` need no key, as in the client.

==================  ==========================================  ==============================================
kind                request                                     normal answer
==================  ==========================================  ==============================================
``submit``          ``POST tasks`` ``{"machine", "payload"}``    ``{"uid", "machine", "status": "New", "created",
                                                                "job_ids": {"ids": [...]}}``; makes a task
``status``          ``GET tasks/{uid}/status``                  ``{"status": S}``; moves the task on
``results``         ``GET tasks/{uid}/results``                 ``{}`` until Completed, then the result
                                                                (``{"00": n, "11": m}``, or ``result=``)
``cancel``          ``POST tasks/{uid}/cancel``                 ``{}``; Cancelled (the app must never send it)
``list``            ``GET tasks``                               405: Piast-Q has no job list
``machines``        ``GET machines``                            ``{"names": [...]}``
``queue_count``     ``GET machines/queue-count``                ``{machine: n}``
``health``          ``GET /api/health/test-connection``         ``{"status": "ok"}``
``unknown``         anything else                               404
==================  ==========================================  ==============================================

States: a task follows ``path`` (default New → Queued → Running → Completed), one step every
``reads_per_state`` status reads, moving at the read; ``path=("New",)`` stays New for ever.

Result expiry: a task with ``expired`` set (or every task, with ``expire_results=True``) answers every
results request, once Completed, with the expiry signal: ``expiry="detail"`` (default) is
``expiry_status`` (410) ``{"detail": "result_expired"}``; ``expiry="empty"`` is 200 ``{}`` as pcss-qapi
0.1.3 reads it ("Task results have been deleted from remote").

Too many connections: the fault ``too_many_connections`` answers ``too_many_status`` (429) with body
``{"detail": "too many connections"}``. With ``max_open=N`` the fake gives that answer by itself to any
request that finds N others still open (the journal marks it ``too_many_connections``).

Task ids: ``uid_factory`` (a callable) makes each uid, e.g. ``lambda n: "a\\nb"`` for an id no URL can hold.

Faults: those of ``FakeMqss`` (refuse, server_error, too_many, redirect, answer, drop, drop_after_create,
half_body, no_job_id, hang) plus ``too_many_connections``.
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid as uuidlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from tests.fakes.harness import Answer, FakeSite, Fault, Route

STATES = ("New", "Queued", "Running", "Completed", "Failed", "Cancelled")
MACHINES = ("piastq-aqt",)
OPEN_KEYLESS = frozenset({"machines", "health"})


@dataclass
class PiastqTask:
    uid: str
    machine: str
    payload: Any
    path: tuple[str, ...]
    created: datetime
    result: Any = None
    expired: bool = False
    step: int = 0
    reads: int = 0

    @property
    def status(self) -> str:
        return self.path[self.step]

    def results(self) -> Any:
        if self.result is not None:
            return self.result
        return {"00": 50, "11": 50}


class FakePiastq(FakeSite):
    """The PCSS task API on loopback. See the module docstring for routes, states and faults."""

    KINDS = frozenset({"submit", "status", "results", "cancel", "list", "machines", "queue_count", "health", "unknown"})

    def __init__(
        self,
        token: str = "pcss-test-key",
        *,
        auth: str = "api_key",
        disabled: bool = False,
        path: tuple[str, ...] = ("New", "Queued", "Running", "Completed"),
        reads_per_state: int = 1,
        result: Any = None,
        expire_results: bool = False,
        expiry: str = "detail",
        expiry_status: int = 410,
        too_many_status: int = 429,
        max_open: int | None = None,
        uid_factory: Callable[[int], str] | None = None,
        hang_seconds: float = 10.0,
    ) -> None:
        super().__init__(token, hang_seconds=hang_seconds)
        if auth not in ("api_key", "bearer") or expiry not in ("detail", "empty"):
            raise ValueError("auth is api_key or bearer; expiry is detail or empty")
        if not path or any(s not in STATES for s in path) or reads_per_state < 1:
            raise ValueError(f"a path is a non-empty sequence of {STATES}; reads_per_state 1 or more")
        self.auth = auth
        self.disabled = disabled
        self.path = tuple(path)
        self.reads_per_state = reads_per_state
        self.result = result
        self.expire_results = expire_results
        self.expiry = expiry
        self.expiry_status = expiry_status
        self.too_many_status = too_many_status
        self.max_open = max_open
        self.uid_factory = uid_factory or (lambda n: str(uuidlib.uuid4()))
        self._tasks: dict[str, PiastqTask] = {}
        self._tasks_lock = threading.Lock()
        self._counter = itertools.count(1)
        self._open = 0
        self._open_lock = threading.Lock()

    def __enter__(self) -> FakePiastq:
        self.start()
        return self

    @property
    def base_url(self) -> str:
        return self.origin + "/api/open/"

    @property
    def jobs(self) -> dict[str, PiastqTask]:
        with self._tasks_lock:
            return dict(self._tasks)

    def job_making_requests(self) -> int:
        return len(self.requests("submit"))

    def kinds(self) -> frozenset[str]:
        return self.KINDS

    def extra_faults(self) -> frozenset[str]:
        return frozenset({"too_many_connections"})

    # -- auth --------------------------------------------------------------------------------------
    def authorized(self, handler: Any, route: Route) -> bool:
        if route.kind in OPEN_KEYLESS:
            return True
        if self.auth == "bearer":
            return bool(handler.headers.get("Authorization") == f"Bearer {self.token}")
        return bool(handler.headers.get("X-API-Key") == self.token)

    def unauthorized(self) -> Answer:
        return Answer(401, {"detail": "Unauthorized"})

    def too_many_connections(self) -> Answer:
        return Answer(self.too_many_status, {"detail": "too many connections"})

    def handle(self, handler: Any, body: bytes) -> None:
        route = self.route(handler.command, handler.path.split("?")[0])
        with self._open_lock:
            self._open += 1
            over = self.max_open is not None and self._open > self.max_open
        try:
            disabled = self.disabled and route.kind not in OPEN_KEYLESS and self.authorized(handler, route)
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
        if path == "/api/health/test-connection" and method == "GET":
            return Route("health")
        if not path.startswith("/api/open/"):
            return Route("unknown")
        parts = [unquote(p) for p in path[len("/api/open/") :].split("/")]
        match method, parts:
            case "POST", ["tasks"]:
                return Route("submit")
            case "GET", ["tasks"]:
                return Route("list")
            case "GET", ["tasks", uid, "status"]:
                return Route("status", (uid,))
            case "GET", ["tasks", uid, "results"]:
                return Route("results", (uid,))
            case "POST", ["tasks", uid, "cancel"]:
                return Route("cancel", (uid,))
            case "GET", ["machines"]:
                return Route("machines")
            case "GET", ["machines", "queue-count"]:
                return Route("queue_count")
        return Route("unknown")

    def fault_answer(self, fault: Fault, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer | None:
        return self.too_many_connections()

    def serve(self, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer:
        kind = route.kind
        if kind == "submit":
            return self._submit(body)
        if kind == "list":
            return Answer(405, {"detail": "Method Not Allowed"})
        if kind == "machines":
            return Answer(200, {"names": list(MACHINES)})
        if kind == "queue_count":
            waiting = sum(1 for t in self.jobs.values() if t.status in ("New", "Queued", "Running"))
            return Answer(200, dict.fromkeys(MACHINES, waiting))
        if kind == "health":
            return Answer(200, {"status": "ok"})
        if kind == "unknown":
            return Answer(404, {"detail": "Not Found"})
        task = self.jobs.get(route.args[0])
        if task is None:
            return Answer(404, {"detail": "Task not found"})
        if kind == "status":
            return Answer(200, {"status": self._read_status(task)})
        if kind == "results":
            if task.status != "Completed":
                return Answer(200, {})
            if task.expired or self.expire_results:
                if self.expiry == "empty":
                    return Answer(200, {})
                return Answer(self.expiry_status, {"detail": "result_expired"})
            return Answer(200, task.results())
        # cancel: never sent by the app; the fake does what the site would.
        task.path = (*task.path[: task.step + 1], "Cancelled")
        task.step = len(task.path) - 1
        return Answer(200, {})

    def _submit(self, body: bytes) -> Answer:
        try:
            request = json.loads(body)
        except ValueError:
            return Answer(422, {"detail": "body is not JSON"})
        if not isinstance(request, dict) or not isinstance(request.get("machine"), str) or "payload" not in request:
            return Answer(422, {"detail": "machine and payload are required"})
        if request["machine"] not in MACHINES:
            return Answer(404, {"detail": "machine not found"})
        n = next(self._counter)
        task = PiastqTask(
            uid=self.uid_factory(n),
            machine=request["machine"],
            payload=request["payload"],
            path=self.path,
            created=datetime.now(UTC),
            result=self.result,
        )
        with self._tasks_lock:
            self._tasks[task.uid] = task
        return Answer(
            200,
            {
                "uid": task.uid,
                "machine": task.machine,
                "status": "New",
                "created": task.created.isoformat(),
                "job_ids": {"ids": [n]},
            },
        )

    def _read_status(self, task: PiastqTask) -> str:
        with self._tasks_lock:
            due = task.reads > 0 and task.reads % self.reads_per_state == 0
            if due and task.step < len(task.path) - 1:
                task.step += 1
            task.reads += 1
            return task.status
