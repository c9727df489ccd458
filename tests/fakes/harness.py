"""The common harness of the fake quantum sites: a loopback HTTP server in a thread, the journal of
every request, per-kind fault scripts, and the redirect trap.

A site fake subclasses ``FakeSite`` and implements ``route`` (method, path → kind and arguments) and
``serve`` (the normal answer of a kind, with its side effect). The harness applies scripted faults around
``serve``; see ``FakeSite.script`` for the fault names. Everything binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

# Faults that answer without the side effect of the request (no job is made).
NO_EFFECT_FAULTS = frozenset({"refuse", "server_error", "redirect", "too_many", "answer", "drop"})
# Faults that apply the side effect (a job IS made) and then give no usable answer.
EFFECT_FAULTS = frozenset({"drop_after_create", "half_body", "no_job_id"})
ALL_FAULTS = NO_EFFECT_FAULTS | EFFECT_FAULTS | {"hang"}


@dataclass(frozen=True)
class JournalEntry:
    """One request as the fake received it. ``headers`` are kept whole, the authorization included,
    so a test can check where the token went."""

    seq: int
    time: float
    method: str
    path: str
    query: dict[str, list[str]]
    headers: tuple[tuple[str, str], ...]
    body: bytes
    kind: str
    fault: str | None
    status: int | None  # the status sent; None when no answer was sent (drop, hang)
    authorized: bool

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key.lower() == name.lower():
                return value
        return None

    def json(self) -> Any:
        return json.loads(self.body)

    def holds(self, secret: str) -> bool:
        """Whether the secret appears anywhere in this request: path, query, any header, body."""
        if not secret:
            return False
        texts = [self.path, json.dumps(self.query), *(f"{k}: {v}" for k, v in self.headers)]
        return any(secret in t for t in texts) or secret.encode() in self.body


@dataclass
class Fault:
    name: str
    times: int
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Answer:
    """What ``serve`` returns: a status, a JSON value (or raw bytes) and extra headers."""

    status: int
    body: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    raw: bytes | None = None

    def payload(self) -> tuple[bytes, str]:
        if self.raw is not None:
            return self.raw, "text/plain; charset=utf-8"
        return json.dumps(self.body).encode(), "application/json"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in one segment: two small writes meet the client's delayed ACK (40 ms each).
    wbufsize = 64 * 1024
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the journal is the log
        pass

    def _handle(self) -> None:
        owner: LoopbackServer = self.server.owner  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        owner.handle(self, body)

    do_GET = _handle
    do_POST = _handle
    do_PUT = _handle
    do_DELETE = _handle
    do_PATCH = _handle
    do_HEAD = _handle


class LoopbackServer:
    """A ThreadingHTTPServer on 127.0.0.1, an ephemeral port, in a daemon thread."""

    def __init__(self) -> None:
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._journal: list[JournalEntry] = []

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.owner = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()  # ends every hang at once
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def port(self) -> int:
        assert self._server is not None, "start the fake first"
        return int(self._server.server_address[1])

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def journal(self) -> list[JournalEntry]:
        with self._lock:
            return list(self._journal)

    # -- request handling ------------------------------------------------------------------------
    def handle(self, handler: _Handler, body: bytes) -> None:
        raise NotImplementedError

    def _record(self, handler: _Handler, body: bytes, **fields: Any) -> None:
        split = urlsplit(handler.path)
        with self._lock:
            self._journal.append(
                JournalEntry(
                    seq=len(self._journal) + 1,
                    time=time.time(),
                    method=handler.command,
                    path=split.path,
                    query=parse_qs(split.query, keep_blank_values=True),
                    headers=tuple(handler.headers.items()),
                    body=body,
                    **fields,
                )
            )

    @staticmethod
    def _send(handler: _Handler, answer: Answer, *, body_bytes: int | None = None) -> None:
        payload, content_type = answer.payload()
        handler.send_response(answer.status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(payload)))
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if handler.command != "HEAD":
            handler.wfile.write(payload if body_bytes is None else payload[:body_bytes])
        handler.wfile.flush()
        if body_bytes is not None:
            handler.close_connection = True

    @staticmethod
    def _drop(handler: _Handler, *, reset: bool) -> None:
        """Close the connection with no answer at all; ``reset`` sends a TCP RST instead of a FIN."""
        handler.close_connection = True
        if reset:
            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


class TrapServer(LoopbackServer):
    """Where a redirect points. It answers every request like a site that accepted it, and records it,
    so a client that followed the redirect is caught by ``saw_token`` and the journal."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def handle(self, handler: _Handler, body: bytes) -> None:
        auth = handler.headers.get("Authorization")
        self._record(handler, body, kind="trap", fault=None, status=200, authorized=auth == f"Bearer {self.token}")
        self._send(handler, Answer(200, {"uuid": "trap-job", "status": "COMPLETED", "result": "{}"}))

    @property
    def saw_token(self) -> bool:
        return any(entry.holds(self.token) for entry in self.journal)


@dataclass(frozen=True)
class Route:
    kind: str
    args: tuple[str, ...] = ()


class FakeSite(LoopbackServer):
    """A site fake: routes, the normal answers with their side effects, scripted faults, a trap."""

    def __init__(self, token: str, *, hang_seconds: float = 10.0) -> None:
        super().__init__()
        self.token = token
        self.hang_seconds = hang_seconds
        self.trap = TrapServer(token)
        self._scripts: dict[str, deque[Fault]] = {}

    def __enter__(self) -> FakeSite:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self.trap.start()
        super().start()

    def stop(self) -> None:
        super().stop()
        self.trap.stop()

    # -- for tests -------------------------------------------------------------------------------
    def script(self, kind: str, fault: str, times: int = 1, **options: Any) -> None:
        """Queue a fault for the next ``times`` requests of ``kind``; then normal service resumes.

        Faults queued for one kind apply in order. Options per fault: ``status`` (refuse,
        server_error, too_many, answer, redirect), ``body`` (answer: a JSON value; ``raw`` for bytes),
        ``reset`` (drop, drop_after_create: a TCP reset instead of a plain close), ``seconds`` (hang),
        ``commit`` (hang: default True; server_error and answer: default False, True makes the request
        take effect before the failure is answered), ``value`` (no_result_yet).
        """
        if fault not in ALL_FAULTS | self.extra_faults():
            raise ValueError(f"unknown fault {fault!r}")
        if kind not in self.kinds():
            raise ValueError(f"unknown request kind {kind!r} (known: {', '.join(sorted(self.kinds()))})")
        if times < 1:
            raise ValueError("times must be 1 or more")
        with self._lock:
            self._scripts.setdefault(kind, deque()).append(Fault(fault, times, dict(options)))

    def pending_faults(self, kind: str) -> int:
        with self._lock:
            return sum(f.times for f in self._scripts.get(kind, ()))

    def requests(self, *kinds: str) -> list[JournalEntry]:
        return [e for e in self.journal if e.kind in kinds]

    def token_seen_outside_authorization(self) -> list[JournalEntry]:
        """Requests that carry the token anywhere but the Authorization header."""
        out = []
        for entry in self.journal:
            stripped = JournalEntry(
                **{**entry.__dict__, "headers": tuple((k, v) for k, v in entry.headers if k.lower() != "authorization")}
            )
            if stripped.holds(self.token):
                out.append(entry)
        return out

    # -- for subclasses --------------------------------------------------------------------------
    def kinds(self) -> frozenset[str]:
        raise NotImplementedError

    def extra_faults(self) -> frozenset[str]:
        return frozenset()

    def route(self, method: str, path: str) -> Route:
        raise NotImplementedError

    def authorized(self, handler: _Handler, route: Route) -> bool:
        return handler.headers.get("Authorization") == f"Bearer {self.token}"

    def unauthorized(self) -> Answer:
        return Answer(401, {"detail": "Unauthorized"})

    def serve(self, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer:
        """The normal answer, applying the side effect (make a job, move its state)."""
        raise NotImplementedError

    def fault_answer(self, fault: Fault, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer | None:
        """A site-specific fault (from ``extra_faults``); None means: serve normally."""
        return None

    def redirect_target(self, handler: _Handler) -> str:
        return self.trap.origin + handler.path

    # -- the dispatcher --------------------------------------------------------------------------
    def _next_fault(self, kind: str) -> Fault | None:
        with self._lock:
            queue = self._scripts.get(kind)
            if not queue:
                return None
            fault = queue[0]
            fault.times -= 1
            if fault.times == 0:
                queue.popleft()
            return Fault(fault.name, 1, fault.options)

    def handle(self, handler: _Handler, body: bytes) -> None:
        split = urlsplit(handler.path)
        route = self.route(handler.command, split.path)
        query = parse_qs(split.query, keep_blank_values=True)
        authorized = self.authorized(handler, route)
        fault = self._next_fault(route.kind)

        def record(status: int | None) -> None:
            self._record(
                handler,
                body,
                kind=route.kind,
                fault=fault.name if fault else None,
                status=status,
                authorized=authorized,
            )

        if fault is None or fault.name in self.extra_faults():
            answer: Answer | None = None
            if not authorized and route.kind != "unknown":
                answer = self.unauthorized()
            elif fault is not None:
                answer = self.fault_answer(fault, route, query, body)
            if answer is None:
                answer = self.serve(route, query, body)
            record(answer.status)
            self._send(handler, answer)
            return

        name, opts = fault.name, fault.options
        if name in NO_EFFECT_FAULTS:
            if name == "drop":
                record(None)
                self._drop(handler, reset=bool(opts.get("reset", False)))
                return
            if name in ("server_error", "answer") and opts.get("commit", False) and authorized:
                self.serve(route, query, body)  # the failure came after the work was done
            answer = self._no_effect_answer(name, opts, handler)
            record(answer.status)
            self._send(handler, answer)
            return
        if name == "hang":
            if opts.get("commit", True) and authorized:
                self.serve(route, query, body)
            record(None)
            self._stopping.wait(float(opts.get("seconds", self.hang_seconds)))
            self._drop(handler, reset=False)
            return
        # EFFECT_FAULTS: the request takes effect, the answer is lost or useless.
        answer = self.serve(route, query, body) if authorized else self.unauthorized()
        if name == "drop_after_create":
            record(None)
            self._drop(handler, reset=bool(opts.get("reset", False)))
        elif name == "half_body":
            record(answer.status)
            payload, _ = answer.payload()
            self._send(handler, answer, body_bytes=max(1, len(payload) // 2))
        else:  # no_job_id
            empty = Answer(200, opts.get("body", {}))
            record(200)
            self._send(handler, empty)

    def _no_effect_answer(self, name: str, opts: Mapping[str, Any], handler: _Handler) -> Answer:
        if name == "refuse":
            status = int(opts.get("status", 401))
            return Answer(status, {"detail": "Unauthorized" if status == 401 else "Forbidden"})
        if name == "server_error":
            status = int(opts.get("status", 500))
            return Answer(status, {"detail": "Internal Server Error" if status == 500 else "Service Unavailable"})
        if name == "too_many":
            return Answer(int(opts.get("status", 429)), {"detail": "Too Many Requests"}, {"Retry-After": "1"})
        if name == "redirect":
            return Answer(
                int(opts.get("status", 302)), {"detail": "moved"}, {"Location": self.redirect_target(handler)}
            )
        # answer: any status and body the test gives, no side effect
        raw = opts.get("raw")
        return Answer(int(opts.get("status", 200)), opts.get("body"), dict(opts.get("headers", {})), raw)
