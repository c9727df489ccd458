"""A fake VLQ site: LEXIS UserOrg and HEAppE on one loopback port, with scripted faults.

It follows notes/quantum-sites.md §1 and §4.2: the HEAppE server's own rules (PascalCase JSON, integer
states, numeric ids, ProblemDetails errors, size limits, SubmitJob only from Configuring (1) or
WaitingForServiceAccount (128)) and the official client's three steps per job: CreateJob, one upload
per file, SubmitJob.

    with FakeVlq(token=jwt) as site:
        site.userorg_url   # "http://127.0.0.1:PORT/userorg"  (LEXIS UserOrg; the real one is api.lexis.tech)
        site.heappe_url    # "http://127.0.0.1:PORT"          (the HEAPPE_URL the project resource gives)
        site.script("submit", "drop_after_create")
        site.journal, site.jobs, site.requests("create", "submit"), site.trap

Every request needs ``Authorization: Bearer <token>`` (else 401 ProblemDetails). Routes and kinds:

==================  ===============================================================  ========================
kind                request                                                          normal answer
==================  ===============================================================  ========================
``project``         ``GET /userorg/api/Project?ProjectShortName=P``                   ``[{"ShortName", ...}]``
``project_resource`` ``GET /userorg/api/ProjectResource?ProjectShortName=P``          one VLQ resource whose
                                                                                     ``HEAPPE_URL`` is the fake
``clusters``        ``GET /heappe/ClusterInformation/ListAvailableClusters``          one cluster, node types
                                                                                     ``init_queue`` and
                                                                                     ``compute_queue``
``create``          ``POST /heappe/JobManagement/CreateJob``                          job info, State 1
``upload``          ``POST /heappe/FileTransfer/UploadFilesToJobExecutionDir``        ``[{"FileName",
                    ``?JobId=J&TaskId=T`` (multipart, field ``files``)                "Succeeded", "Path"}]``
``submit``          ``PUT /heappe/JobManagement/SubmitJob`` ``{"CreatedJobInfoId": J}``  job info
``info``            ``GET /heappe/JobManagement/CurrentInfoForJob?SubmittedJobInfoId=J``  job info; moves it on
``list``            ``GET /heappe/JobManagement/ListJobsForCurrentUser[?jobStates=..]``  ``[job info, ...]``
``download``        ``POST /heappe/FileTransfer/DownloadFileFromCluster``             base64 of the file as a
                    ``{"SubmittedJobInfoId": J, "RelativeFilePath": "/J/T/name"}``    JSON string
``cancel``          ``PUT /heappe/JobManagement/CancelJob``                           job info, State 64 (the
                                                                                     app must never send it)
``delete``          ``DELETE /heappe/JobManagement/DeleteJob``                        ``"Job was deleted"``
``health``          ``GET /heappe/Health``                                            ``{"IsHealthy": true}``
``unknown``         anything else                                                    404
==================  ===============================================================  ========================

Server rules kept: a CreateJob without a valid ``JobSpecification`` → 404 "Validation Problem" (no job);
a body over the limit → 413 (CreateJob 250000 B, SubmitJob 94 B, CancelJob 98 B); SubmitJob of a job not
in 1 or 128 → 404 "Unable to submit the job (incorrect job state)."; an unknown job id → 404
"Job 'J' does not exist in the HEAppE."; an upload to an unknown job or task → 500 "Problem"; a download
of a missing file → 400 "Invalid Request", of a job still in 1 or 128 → ``null``.

States: a job is Configuring (1) until SubmitJob; then it follows ``path`` (default 2 → 4 → 8 → 16),
``reads_per_state`` CurrentInfoForJob reads per step, moving at the read. A job whose environment has
``Q_COMMAND=backend_init`` is an init job and follows ``init_path``. Useful paths: ``(128, 2, 4, 8, 16)``
(waiting for a service account), ``(1,)`` (stuck in Configuring after SubmitJob), ``(2, 4, 8, 32)``
(Failed: ``stderr.txt`` holds ``failure_stderr``). When a job reaches Finished (16) its task folder holds
``stdout.txt``, ``stderr.txt`` and ``results.json`` (counts, JSON: safer than the real pickles), or
``backend.pkl`` for an init job.

The envelope: when ``user_token.enc`` is uploaded, the fake decrypts it with ``USER_JWT_PWD`` from the
CreateJob environment (Fernet, key = urlsafe_b64(sha256(password))) and sets ``job.envelope_ok``.

Faults: those of ``FakeMqss`` (refuse, server_error (``commit=True``), too_many, redirect, answer, drop,
drop_after_create, half_body, no_job_id, hang), plus ``upload_failed`` (upload: 200 with
``"Succeeded": false`` for each file, nothing stored) and ``pass`` (served normally: it holds a place in
the queue; ``script_metered`` uses it to let the init job's request of a kind through first) and
``echo_body`` (``status``, default 500, with a ProblemDetails whose detail is the request body: the
envelope password, a multipart upload's Fernet text, all of it; no side effect).
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.harness import Answer, FakeSite, Fault, Route

# HEAppE's JobState values (a [Flags] enum on the server).
CONFIGURING = 1
SUBMITTED = 2
QUEUED = 4
RUNNING = 8
FINISHED = 16
FAILED = 32
CANCELED = 64
WAITING_FOR_ACCOUNT = 128
DELETED = 256
SIZE_LIMITS = {"create": 250_000, "submit": 94, "cancel": 98, "delete": 120, "download": 700}
PROJECT = "P-QTEST"
RESOURCE = "VLQ-QUANTUM"
CLUSTER = "Karolina"
CLUSTER_ID = 2
INIT_NODE_TYPE, RUN_NODE_TYPE = 31, 32
INIT_TEMPLATE, RUN_TEMPLATE = 301, 302
FILE_TRANSFER_METHOD = 5
DEFAULT_FAILURE = "ERROR: Current resource consumption 12.00 exceeds allocation 10.00\n"


def problem(status: int, title: str, detail: str) -> Answer:
    return Answer(status, {"title": title, "status": status, "detail": detail})


def _iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") if moment else None


@dataclass
class VlqJob:
    id: int
    task_id: int
    name: str
    spec: Mapping[str, Any]
    env: dict[str, str]
    path: tuple[int, ...]
    seconds: float
    created: datetime
    state: int = CONFIGURING
    step: int = -1  # index in path; -1 while Configuring before SubmitJob
    reads: int = 0
    submits: int = 0
    files: dict[str, bytes] = field(default_factory=dict)
    envelope_ok: bool | None = None
    result: Any = None
    failure_stderr: str = DEFAULT_FAILURE

    @property
    def is_init(self) -> bool:
        return self.env.get("Q_COMMAND") == "backend_init"

    def info(self) -> dict[str, Any]:
        started = self.created + timedelta(seconds=2) if self.state >= RUNNING and self.state != 128 else None
        ended = started + timedelta(seconds=self.seconds) if started and self.state >= FINISHED else None
        task = {
            "Id": self.task_id,
            "Name": f"{self.name}-task",
            "State": self.state if self.state != WAITING_FOR_ACCOUNT else CONFIGURING,
            "Priority": 4,
            "AllocatedTime": self.seconds if ended else None,
            "AllocatedCoreIds": [],
            "StartTime": _iso(started),
            "EndTime": _iso(ended),
            "NodeType": {"Id": INIT_NODE_TYPE if self.is_init else RUN_NODE_TYPE},
            "ErrorMessage": self.failure_stderr.strip() if self.state == FAILED else None,
            "CpuHyperThreading": False,
            "Reason": None,
        }
        return {
            "Id": self.id,
            "Name": self.name,
            "State": self.state,
            "CreationTime": _iso(self.created),
            "SubmitTime": _iso(self.created + timedelta(seconds=1)) if self.submits else None,
            "StartTime": _iso(started),
            "EndTime": _iso(ended),
            "TotalAllocatedTime": self.seconds if ended else None,
            "SubProject": None,
            "Tasks": [task],
        }

    def finish_files(self) -> None:
        if self.state == FINISHED:
            self.files.setdefault("stdout.txt", b"done\n")
            self.files.setdefault("stderr.txt", b"")
            if self.is_init:
                self.files.setdefault("backend.pkl", b"fake-backend-pickle")
            else:
                counts = self.result if self.result is not None else {"00": 50, "11": 50}
                self.files.setdefault("results.json", json.dumps(counts).encode())
        elif self.state == FAILED:
            self.files.setdefault("stdout.txt", self.failure_stderr.encode())
            self.files.setdefault("stderr.txt", self.failure_stderr.encode())


class FakeVlq(FakeSite):
    """LEXIS UserOrg + HEAppE on loopback. See the module docstring for routes, states and faults."""

    KINDS = frozenset(
        {
            "project",
            "project_resource",
            "clusters",
            "create",
            "upload",
            "submit",
            "info",
            "list",
            "download",
            "cancel",
            "delete",
            "health",
            "unknown",
        }
    )

    def __init__(
        self,
        token: str = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ0ZXN0In0.c2ln",
        *,
        path: tuple[int, ...] = (SUBMITTED, QUEUED, RUNNING, FINISHED),
        init_path: tuple[int, ...] = (SUBMITTED, RUNNING, FINISHED),
        reads_per_state: int = 1,
        job_seconds: float = 3.0,
        failure_stderr: str = DEFAULT_FAILURE,
        hang_seconds: float = 10.0,
        result_of: Callable[[VlqJob], Any] | None = None,
    ) -> None:
        super().__init__(token, hang_seconds=hang_seconds)
        # The counts of a metered job's results.json, made from the job (a test that echoes its envelope)
        self.result_of = result_of
        if not path or not init_path or reads_per_state < 1:
            raise ValueError("paths must be non-empty and reads_per_state 1 or more")
        self.path = tuple(path)
        self.init_path = tuple(init_path)
        self.reads_per_state = reads_per_state
        self.job_seconds = job_seconds
        self.failure_stderr = failure_stderr
        self._jobs: dict[int, VlqJob] = {}
        self._jobs_lock = threading.Lock()
        self._job_ids = itertools.count(1001)
        self._task_ids = itertools.count(5001)
        self._local = threading.local()

    def __enter__(self) -> FakeVlq:
        self.start()
        return self

    @property
    def userorg_url(self) -> str:
        return self.origin + "/userorg"

    @property
    def heappe_url(self) -> str:
        return self.origin

    @property
    def jobs(self) -> dict[int, VlqJob]:
        with self._jobs_lock:
            return dict(self._jobs)

    def job_making_requests(self) -> int:
        return len(self.requests("create", "submit"))

    def kinds(self) -> frozenset[str]:
        return self.KINDS

    def extra_faults(self) -> frozenset[str]:
        return frozenset({"upload_failed", "pass", "echo_body"})

    def script_metered(self, kind: str, fault: str, **options: Any) -> None:
        """A fault for the first metered job's request of ``kind`` (create, upload, submit): the init
        job of the call makes one request of each kind first, and is served normally."""
        self.script(kind, "pass")
        self.script(kind, fault, **options)

    def unauthorized(self) -> Answer:
        return problem(401, "Unauthorized Access", "UserOrg Authentication Problem")

    def route(self, method: str, path: str) -> Route:
        table = {
            ("GET", "/userorg/api/Project"): "project",
            ("GET", "/userorg/api/ProjectResource"): "project_resource",
            ("GET", "/heappe/ClusterInformation/ListAvailableClusters"): "clusters",
            ("POST", "/heappe/JobManagement/CreateJob"): "create",
            ("POST", "/heappe/FileTransfer/UploadFilesToJobExecutionDir"): "upload",
            ("PUT", "/heappe/JobManagement/SubmitJob"): "submit",
            ("GET", "/heappe/JobManagement/CurrentInfoForJob"): "info",
            ("GET", "/heappe/JobManagement/ListJobsForCurrentUser"): "list",
            ("POST", "/heappe/FileTransfer/DownloadFileFromCluster"): "download",
            ("PUT", "/heappe/JobManagement/CancelJob"): "cancel",
            ("DELETE", "/heappe/JobManagement/DeleteJob"): "delete",
            ("GET", "/heappe/Health"): "health",
        }
        return Route(table.get((method, path), "unknown"))

    # -- answers ---------------------------------------------------------------------------------
    def serve(self, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer:
        kind = route.kind
        limit = SIZE_LIMITS.get(kind)
        if limit is not None and len(body) > limit:
            return problem(413, "Request body too large.", f"The request body is larger than {limit} bytes.")
        handler = getattr(self, f"_serve_{kind}", None)
        if handler is None:
            return problem(404, "Not Found", "No such route.")
        answer: Answer = handler(query, body)
        return answer

    def fault_answer(self, fault: Fault, route: Route, query: Mapping[str, list[str]], body: bytes) -> Answer | None:
        if fault.name == "pass":  # served normally: a place holder in the queue of faults
            return None
        if fault.name == "echo_body":  # a careless server: its error repeats the request, secrets and all
            status = int(fault.options.get("status", 500))
            return problem(status, "Problem", body.decode(errors="replace"))
        # upload_failed: the site answers 200 but keeps none of the files.
        names = [name for name, _ in _multipart_files(self._local.content_type, body)]
        return Answer(200, [{"FileName": n, "Succeeded": False, "Path": None} for n in names])

    def handle(self, handler: Any, body: bytes) -> None:
        # The multipart boundary is in a header; serve() sees only the body, so keep it per thread.
        self._local.content_type = handler.headers.get("Content-Type", "")
        super().handle(handler, body)

    def _serve_project(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        if query.get("ProjectShortName", [""])[0] != PROJECT:
            return Answer(200, [])
        now = datetime.now(UTC)
        return Answer(
            200,
            [
                {
                    "Id": "b1c2d3e4-0000-4000-8000-00000000p001",
                    "ShortName": PROJECT,
                    "Name": "qdevices test project",
                    "StartDate": _iso(now - timedelta(days=30)),
                    "EndDate": _iso(now + timedelta(days=300)),
                }
            ],
        )

    def _serve_project_resource(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        if query.get("ProjectShortName", [""])[0] != PROJECT:
            return Answer(200, [])
        now = datetime.now(UTC)
        return Answer(
            200,
            [
                {
                    "Name": RESOURCE,
                    "LocationTypeId": 7,
                    "AggregationName": "VLQ",
                    "StartDate": _iso(now - timedelta(days=30)),
                    "EndDate": _iso(now + timedelta(days=300)),
                    "Assignments": [
                        {
                            "LocationName": CLUSTER,
                            "AllocationAmount": 1000,
                            "ProjectResourceId": "r-0001",
                            "Specifications": [
                                {"Key": "HEAPPE_URL", "Value": self.heappe_url},
                                {"Key": "SW_STACK", "Value": "qaas"},
                                {"Key": "QUANTUM_TECHNOLOGY", "Value": "IQM"},
                            ],
                        }
                    ],
                }
            ],
        )

    def _serve_clusters(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        def node_type(node_id: int, name: str, template_id: int, template: str) -> dict[str, Any]:
            return {
                "Id": node_id,
                "Name": name,
                "Queue": name,
                "FileTransferMethodId": FILE_TRANSFER_METHOD,
                "Projects": [
                    {
                        "Id": 77,
                        "AccountingString": RESOURCE,
                        "CommandTemplates": [{"Id": template_id, "Name": template}],
                    }
                ],
            }

        return Answer(
            200,
            [
                {
                    "Id": CLUSTER_ID,
                    "Name": CLUSTER,
                    "NodeTypes": [
                        node_type(INIT_NODE_TYPE, "init_queue", INIT_TEMPLATE, "RunQInit"),
                        node_type(RUN_NODE_TYPE, "compute_queue", RUN_TEMPLATE, "RunQExecute"),
                    ],
                }
            ],
        )

    def _serve_create(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        try:
            spec = json.loads(body)["JobSpecification"]
            name = spec["Name"]
            tasks = spec["Tasks"]
            valid = (
                isinstance(name, str)
                and 0 < len(name) <= 50
                and isinstance(tasks, list)
                and len(tasks) >= 1
                and all(isinstance(t, dict) and "CommandTemplateId" in t and "ClusterNodeTypeId" in t for t in tasks)
                and all(k in spec for k in ("ProjectId", "ClusterId", "FileTransferMethodId"))
            )
        except (ValueError, KeyError, TypeError):
            valid = False
        if not valid:
            return problem(404, "Validation Problem", "Submitted job specification is not valid.")
        env: dict[str, str] = {}
        for holder in [spec, *tasks]:
            for var in holder.get("EnvironmentVariables") or []:
                env[str(var.get("Name"))] = str(var.get("Value"))
        job = VlqJob(
            id=next(self._job_ids),
            task_id=next(self._task_ids),
            name=name,
            spec=spec,
            env=env,
            path=self.init_path if env.get("Q_COMMAND") == "backend_init" else self.path,
            seconds=self.job_seconds,
            created=datetime.now(UTC),
            failure_stderr=self.failure_stderr,
        )
        if self.result_of is not None and not job.is_init:
            job.result = self.result_of(job)
        with self._jobs_lock:
            self._jobs[job.id] = job
        return Answer(200, job.info())

    def _serve_upload(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        job = self._job_of(query.get("JobId", [""])[0])
        task = query.get("TaskId", [""])[0]
        if job is None or task != str(job.task_id):
            return problem(500, "Problem", "Problem occured! Contact the administrators.")
        answers = []
        for name, content in _multipart_files(self._local.content_type, body):
            job.files[name] = content
            answers.append({"FileName": name, "Succeeded": True, "Path": f"/{job.id}/{job.task_id}/{name}"})
            if name == "user_token.enc":
                job.envelope_ok = _envelope_holds(job.env.get("USER_JWT_PWD", ""), content, self.token)
        return Answer(200, answers)

    def _serve_submit(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        try:
            job_id = json.loads(body)["CreatedJobInfoId"]
        except (ValueError, KeyError, TypeError):
            return problem(404, "Validation Problem", "CreatedJobInfoId is required.")
        job = self._job_of(str(job_id))
        if job is None:
            return problem(404, "Validation Problem", f"Job '{job_id}' does not exist in the HEAppE.")
        with self._jobs_lock:
            if job.state not in (CONFIGURING, WAITING_FOR_ACCOUNT):
                return problem(404, "Validation Problem", "Unable to submit the job (incorrect job state).")
            job.submits += 1
            job.step = 0
            job.reads = 0
            job.state = job.path[0]
            job.finish_files()
        return Answer(200, job.info())

    def _serve_info(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        job_id = query.get("SubmittedJobInfoId", [""])[0]
        job = self._job_of(job_id)
        if job is None:
            return problem(404, "Validation Problem", f"Job '{job_id}' does not exist in the HEAppE.")
        with self._jobs_lock:
            if job.step >= 0 and job.state not in (CANCELED, DELETED):
                due = job.reads > 0 and job.reads % self.reads_per_state == 0
                if due and job.step < len(job.path) - 1:
                    job.step += 1
                    job.state = job.path[job.step]
                    job.finish_files()
                job.reads += 1
        return Answer(200, job.info())

    def _serve_list(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        wanted = query.get("jobStates", [""])[0]
        states = {int(s) for s in wanted.split(",") if s.strip().isdigit()}
        return Answer(200, [j.info() for j in self.jobs.values() if not states or j.state in states])

    def _serve_download(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        try:
            request = json.loads(body)
            job = self._job_of(str(request["SubmittedJobInfoId"]))
            path = str(request["RelativeFilePath"])
        except (ValueError, KeyError, TypeError):
            return problem(400, "Invalid Request", "SubmittedJobInfoId and RelativeFilePath are required.")
        if job is None:
            return problem(404, "Validation Problem", "Job does not exist in the HEAppE.")
        if job.state in (CONFIGURING, WAITING_FOR_ACCOUNT):
            return Answer(200, None)
        prefix = f"/{job.id}/{job.task_id}/"
        name = path[len(prefix) :] if path.startswith(prefix) else None
        if name is None or name not in job.files:
            return problem(400, "Invalid Request", "NotExistingPath")
        return Answer(200, base64.b64encode(job.files[name]).decode())

    def _serve_cancel(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        try:
            job = self._job_of(str(json.loads(body)["SubmittedJobInfoId"]))
        except (ValueError, KeyError, TypeError):
            job = None
        if job is None:
            return problem(404, "Validation Problem", "Job does not exist in the HEAppE.")
        job.state = CANCELED
        return Answer(200, job.info())

    def _serve_delete(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        try:
            job = self._job_of(str(json.loads(body)["SubmittedJobInfoId"]))
        except (ValueError, KeyError, TypeError):
            job = None
        if job is None or not (job.state == CONFIGURING or job.state >= FINISHED):
            return Answer(400, "Job was not deleted")
        job.state = DELETED
        return Answer(200, "Job was deleted")

    def _serve_health(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        return Answer(200, {"IsHealthy": True})

    def _serve_unknown(self, query: Mapping[str, list[str]], body: bytes) -> Answer:
        return problem(404, "Not Found", "No such route.")

    def _job_of(self, text: str) -> VlqJob | None:
        if not text.isdigit():
            return None
        with self._jobs_lock:
            return self._jobs.get(int(text))


def _multipart_files(content_type: str, body: bytes) -> list[tuple[str, bytes]]:
    if not content_type.startswith("multipart/form-data"):
        return []
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    files = []
    for part in message.iter_parts():
        filename = part.get_filename()
        if part.get_param("name", header="content-disposition") == "files" and filename:
            files.append((str(filename), bytes(part.get_payload(decode=True) or b"")))
    return files


def _envelope_holds(user_jwt_pwd: str, user_token_enc: bytes, token: str) -> bool:
    """Whether the uploaded envelope opens with USER_JWT_PWD and holds the token (qaas's scheme)."""
    from cryptography.fernet import Fernet, InvalidToken

    try:
        password = base64.b64decode(user_jwt_pwd, validate=True)
        key = base64.urlsafe_b64encode(hashlib.sha256(password).digest())
        return Fernet(key).decrypt(base64.b64decode(user_token_enc)) == token.encode()
    except (ValueError, InvalidToken):
        return False
