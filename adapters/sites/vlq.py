"""VlqSite: the VLQ machine (IT4I) through LEXIS UserOrg and HEAppE, over httpx.

Every call to the machine is a HEAppE job (notes/quantum-sites.md §1). Before the first order of a
call, an init job (``Q_COMMAND=backend_init``) must finish; then each metered job is three requests,
CreateJob, one upload, SubmitJob, and the live call writes "created" and "uploaded" between them.

Addresses: LEXIS UserOrg and HEAppE are constants here. UserOrg names the project's HEAppE address
(``HEAPPE_URL``); it must be this build's constant, else nothing is sent to it: the token never goes to
an address an answer names. No redirect is followed, no proxy or netrc is read, no request is retried.

The envelope: each job gets a fresh 50-character password. Its base64 is the job's ``USER_JWT_PWD``
variable; ``user_token.enc`` is base64 of the token encrypted with Fernet under sha256(password), as
the official client does. Both forms of the password go to ``on_secret`` (the redaction filter) before
the request that carries them is sent.

Results: the task's ``results.json`` (counts) is downloaded; the official stack also leaves pickles,
which the app never loads. Device seconds are the job's EndTime - StartTime.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from cryptography.fernet import Fernet

from dunscaith.adapters.sites.http_common import (
    describe,
    fixed_client,
    job_answer,
    json_or_none,
    read_failure,
    same_address,
    send,
)
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

LEXIS_USERORG_URL = "https://api.lexis.tech/userorg/"
# The HEAppE instance of VLQ; the project resource's HEAPPE_URL must name this address.
VLQ_HEAPPE_URL = "https://heappe.it4i.cz/vlq/"

# HEAppE's JobState, a [Flags] enum of single values (JobState.cs): the state names and their phase.
JOB_STATES: dict[int, tuple[str, Phase]] = {
    1: ("Configuring", Phase.CONFIGURING),  # made by CreateJob, not given to the scheduler
    2: ("Submitted", Phase.WAITING),
    4: ("Queued", Phase.WAITING),
    8: ("Running", Phase.WAITING),
    16: ("Finished", Phase.COMPLETED),
    32: ("Failed", Phase.FAILED),
    64: ("Canceled", Phase.CANCELLED),
    128: ("WaitingForServiceAccount", Phase.WAITING),  # SubmitJob taken; HEAppE submits it later itself
    256: ("Deleted", Phase.CANCELLED),  # someone deleted it at the site: it will give no result
}
PASSWORD_ALPHABET = string.ascii_letters + string.digits + string.punctuation
PASSWORD_LENGTH = 50
HEAPPE_NAME_MAX = 50
INIT_WALLTIME, RUN_WALLTIME = 30, 7200
RESULT_FILE = "results.json"
BACKEND_FILE = "backend.pkl"


@dataclass(frozen=True, slots=True)
class _NodeType:
    id: int
    transfer_method: int
    template: int


@dataclass(frozen=True, slots=True)
class _Context:
    """What UserOrg and HEAppE say about the project: looked up once per call."""

    resource_name: str
    resource_id: str
    cluster_id: int
    project_id: int
    init: _NodeType
    run: _NodeType


class _Failed(Exception):
    def __init__(self, kind: JobAnswer, detail: str, status: int | None = None, job: str | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.status = status
        self.job = job

    def answer(self) -> JobRequestAnswer:
        return JobRequestAnswer(self.kind, self.job, self.status, self.detail)


def _problem(response: httpx.Response) -> str:
    """The status, and HEAppE's ProblemDetails title and detail when it sent one (it names the cause:
    "Unable to submit the job (incorrect job state)."). It passes the redaction filter like any text."""
    data = json_or_none(response)
    words = [str(data[k]) for k in ("title", "detail") if isinstance(data, dict) and data.get(k)]
    text = ": ".join([describe(response), *words])
    return text if len(text) <= 300 else text[:297] + "..."


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _seconds(info: dict[str, Any]) -> float | None:
    start, end = _parse_time(info.get("StartTime")), _parse_time(info.get("EndTime"))
    if start is None or end is None:
        return None
    return max(0.0, (end - start).total_seconds())


def _in_dates(item: dict[str, Any], now: datetime) -> bool:
    start, end = _parse_time(item.get("StartDate")), _parse_time(item.get("EndDate"))
    return (start is None or start <= now) and (end is None or now <= end)


def _sleep_then_go_on(seconds: float) -> bool:
    time.sleep(seconds)
    return False


def new_envelope(token: str) -> tuple[str, str, bytes]:
    """A fresh password, its base64 (USER_JWT_PWD), and user_token.enc for ``token``."""
    password = "".join(secrets.choice(PASSWORD_ALPHABET) for _ in range(PASSWORD_LENGTH))
    user_jwt_pwd = base64.b64encode(password.encode()).decode()
    key = base64.urlsafe_b64encode(hashlib.sha256(password.encode()).digest())
    enc = base64.b64encode(Fernet(key).encrypt(token.encode()))
    return password, user_jwt_pwd, enc


class VlqSite:
    name = SiteName.VLQ
    steps: tuple[Step, ...] = (Step.CREATE, Step.UPLOAD, Step.SUBMIT)

    def __init__(self, token: str, project: str | None = None, *, userorg_url: str = LEXIS_USERORG_URL,
                 heappe_url: str = VLQ_HEAPPE_URL, timeout: float = 30.0, upload_timeout: float = 120.0,
                 on_secret: Callable[[str], None] = lambda secret: None, init_poll_seconds: float = 0.5,
                 init_wait_seconds: float = 600.0, pause: Callable[[float], bool] | None = None) -> None:
        self._token = token
        self._project = project or ""
        self._heappe_url = heappe_url
        headers = {"Authorization": f"Bearer {token}"}
        self._userorg = fixed_client(userorg_url, headers, timeout)
        self._heappe = fixed_client(heappe_url, headers, timeout)
        self._upload_timeout = upload_timeout
        self._on_secret = on_secret
        self._init_poll = init_poll_seconds
        self._init_wait = init_wait_seconds
        # Between two reads of the init job: True ends the wait (a signal came); the call then stops.
        self._pause = pause or _sleep_then_go_on
        self._context: _Context | None = None
        self._tasks: dict[str, int] = {}  # job -> its task id
        self._envelopes: dict[str, bytes] = {}  # job -> user_token.enc, until it is uploaded
        self._seconds: dict[str, float | None] = {}
        self._backend: bytes | None = None  # the init job's backend.pkl, uploaded with each job as is
        self._traits = TRAITS[SiteName.VLQ]

    def __repr__(self) -> str:  # a traceback that shows locals must not show the token
        return f"VlqSite(project={self._project!r})"

    # --- the project, its resource and HEAppE templates -----------------------------------------------
    def _get(self, client: httpx.Client, path: str, what: str, **params: Any) -> Any:
        response = send(client, "GET", path, params=params)
        if isinstance(response, NoAnswer):
            raise _Failed(JobAnswer.UNKNOWN, f"{what}: {response.detail}")
        if response.status_code in self._traits.refusal_statuses:
            raise _Failed(JobAnswer.REFUSED, f"{what}: the token was refused ({describe(response)})",
                          response.status_code)
        data = json_or_none(response)
        if not response.is_success or data is None:
            raise _Failed(JobAnswer.UNKNOWN, f"{what}: {describe(response)}", response.status_code)
        return data

    def _lookup(self) -> _Context:
        if self._context is not None:
            return self._context
        if not self._project:
            raise _Failed(JobAnswer.UNKNOWN, "no LEXIS project given (the manifest's project)")
        resource, assignment = self._vlq_resource(datetime.now(UTC))
        cluster_name = assignment.get("LocationName")
        cluster = self._cluster(cluster_name)
        try:
            init, project_id = self._node(cluster, "init_queue", "RunQInit", resource["Name"])
            run, _ = self._node(cluster, "compute_queue", "RunQExecute", resource["Name"])
            self._context = _Context(str(resource["Name"]), str(assignment["ProjectResourceId"]), int(cluster["Id"]),
                                     project_id, init, run)
        except (KeyError, TypeError, ValueError, StopIteration):
            raise _Failed(JobAnswer.UNKNOWN, f"HEAppE cluster {cluster_name!r} has no RunQInit and RunQExecute "
                          f"templates for {resource.get('Name')!r}") from None
        return self._context

    def _vlq_resource(self, now: datetime) -> tuple[dict[str, Any], dict[str, Any]]:
        """LEXIS UserOrg: the project active now, its active VLQ resource and that resource's first assignment,
        whose HEAPPE_URL must be this build's VLQ address."""
        self._check_project(now)
        resources = self._get(self._userorg, "api/ProjectResource", "LEXIS project resources",
                              ProjectShortName=self._project)
        found = [r for r in resources if isinstance(r, dict) and r.get("LocationTypeId") == 7
                 and r.get("AggregationName") == "VLQ" and _in_dates(r, now)] if isinstance(resources, list) else []
        if not found or not isinstance(found[0].get("Assignments"), list) or not found[0]["Assignments"]:
            raise _Failed(JobAnswer.UNKNOWN, f"LEXIS project {self._project} has no active VLQ resource")
        resource, assignment = found[0], found[0]["Assignments"][0]
        specs = {s.get("Key"): s.get("Value") for s in assignment.get("Specifications") or [] if isinstance(s, dict)}
        heappe = specs.get("HEAPPE_URL")
        if not isinstance(heappe, str) or not same_address(heappe, self._heappe_url):
            raise _Failed(JobAnswer.UNKNOWN, f"the project's HEAPPE_URL {heappe!r} is not this build's VLQ address "
                          f"{self._heappe_url}: nothing is sent there (report it to IT4I support)")
        return resource, assignment

    def _check_project(self, now: datetime) -> None:
        """LEXIS knows the project for this token, and it is active now."""
        projects = self._get(self._userorg, "api/Project", "LEXIS project", ProjectShortName=self._project)
        project = next((p for p in projects if isinstance(p, dict) and p.get("ShortName") == self._project), None) \
            if isinstance(projects, list) else None
        if project is None:
            raise _Failed(JobAnswer.UNKNOWN, f"LEXIS knows no project {self._project} for this token")
        if not _in_dates(project, now):
            raise _Failed(JobAnswer.UNKNOWN, f"LEXIS project {self._project} is not active now")

    def _cluster(self, cluster_name: Any) -> dict[str, Any]:
        """HEAppE's cluster of that name, as it lists it."""
        clusters = self._get(self._heappe, "heappe/ClusterInformation/ListAvailableClusters", "HEAppE clusters",
                             ClusterName=cluster_name)
        cluster = next((c for c in clusters if isinstance(c, dict) and c.get("Name") == cluster_name), None) \
            if isinstance(clusters, list) else None
        if cluster is None:
            raise _Failed(JobAnswer.UNKNOWN, f"HEAppE lists no cluster {cluster_name!r}")
        return cluster

    @staticmethod
    def _node(cluster: dict[str, Any], queue: str, template: str, accounting: str) -> tuple[_NodeType, int]:
        node = next(n for n in cluster["NodeTypes"] if queue in (n.get("Queue"), n.get("Name")))
        project = next(p for p in node["Projects"] if p.get("AccountingString") == accounting)
        command = next(t for t in project["CommandTemplates"] if t.get("Name") == template)
        return _NodeType(int(node["Id"]), int(node["FileTransferMethodId"]), int(command["Id"])), int(project["Id"])

    # --- one job's three requests ------------------------------------------------------------------
    def _spec(self, name: str, node: _NodeType, walltime: int, cores: int, command: str, device: str,
              user_jwt_pwd: str) -> dict[str, Any]:
        ctx = self._lookup()
        env = [{"Name": "Q_COMMAND", "Value": command}, {"Name": "Q_OPTIONAL_ARG", "Value": device},
               {"Name": "USER_JWT_PWD", "Value": user_jwt_pwd}, {"Name": "LEXIS_PROJECT", "Value": self._project},
               {"Name": "LEXIS_PROJECT_RESOURCE_ID", "Value": ctx.resource_id}]
        task = {"Name": name, "MinCores": cores, "MaxCores": cores, "WalltimeLimit": walltime,
                "ProgressFile": "progress.txt", "LogFile": "log.txt", "StandardOutputFile": "stdout.txt",
                "StandardErrorFile": "stderr.txt", "ClusterNodeTypeId": node.id, "CommandTemplateId": node.template,
                "TemplateParameterValues": [], "EnvironmentVariables": env}
        return {"JobSpecification": {"Name": name, "ProjectId": ctx.project_id, "ClusterId": ctx.cluster_id,
                                     "FileTransferMethodId": node.transfer_method, "WalltimeLimit": walltime,
                                     "EnvironmentVariables": env, "Tasks": [task]}}

    def _create(self, name: str, init: bool, device: str) -> JobRequestAnswer:
        try:
            ctx = self._lookup()
        except _Failed as failed:
            # The lookup makes no job and CreateJob was not sent: nothing was made, whatever the lookup got.
            unsent = failed.kind if failed.kind is JobAnswer.REFUSED else JobAnswer.NOT_SENT
            return JobRequestAnswer(unsent, None, failed.status, f"not sent: {failed.detail}")
        password, user_jwt_pwd, enc = new_envelope(self._token)
        self._on_secret(password)  # before the request that carries it, so any echo of it is cleaned
        self._on_secret(user_jwt_pwd)
        node = ctx.init if init else ctx.run
        if len(name) > HEAPPE_NAME_MAX:  # the manifest refuses such a name; never cut one to fit
            return JobRequestAnswer(JobAnswer.REFUSED, None, None, f"job name longer than {HEAPPE_NAME_MAX}: not sent")
        body = self._spec(name, node, INIT_WALLTIME if init else RUN_WALLTIME, 1 if init else 2,
                          "backend_init" if init else "backend_run", device, user_jwt_pwd)
        response = send(self._heappe, "POST", "heappe/JobManagement/CreateJob", json=body)
        data = json_or_none(response)
        job_id = data.get("Id") if isinstance(data, dict) else None
        tasks = data.get("Tasks") if isinstance(data, dict) else None
        task = tasks[0].get("Id") if isinstance(tasks, list) and tasks and isinstance(tasks[0], dict) else None
        good = isinstance(job_id, int) and not isinstance(job_id, bool) and isinstance(task, int)
        answer = job_answer(response, self._traits.refusals(Step.CREATE), str(job_id) if good else None,
                            " with no job id", _problem)
        if answer.job is not None:
            assert isinstance(task, int)
            self._tasks[answer.job] = task
            self._envelopes[answer.job] = enc
        return answer

    def _upload(self, job: str, files: list[tuple[str, bytes]]) -> JobRequestAnswer:
        task = self._tasks.get(job)
        if task is None:
            return JobRequestAnswer(JobAnswer.UNKNOWN, None, None, f"job {job} was not created by this call")
        parts = [("files", (name, content, "application/octet-stream")) for name, content in files]
        response = send(self._heappe, "POST", "heappe/FileTransfer/UploadFilesToJobExecutionDir",
                        params={"JobId": job, "TaskId": task}, files=parts, timeout=self._upload_timeout)
        data = json_or_none(response)
        taken = isinstance(data, list) and {d.get("FileName") for d in data if isinstance(d, dict)
                                            and d.get("Succeeded") is True} >= {name for name, _ in files}
        answer = job_answer(response, self._traits.refusals(Step.UPLOAD), job if taken else None,
                            ", files not taken", _problem)
        if answer.kind is JobAnswer.OK:
            self._envelopes.pop(job, None)
        return answer

    def _submit(self, job: str) -> JobRequestAnswer:
        response = send(self._heappe, "PUT", "heappe/JobManagement/SubmitJob", json={"CreatedJobInfoId": int(job)})
        data = json_or_none(response)
        good = isinstance(data, dict) and str(data.get("Id")) == job and isinstance(data.get("State"), int)
        # A 404 "incorrect job state" means the job already left Configuring: never a refusal.
        return job_answer(response, self._traits.refusals(Step.SUBMIT), job if good else None,
                          ", not the job's state", _problem)

    # --- the Site port -----------------------------------------------------------------------------
    def prepare(self, device: str) -> JobRequestAnswer:
        """The init job: made, given its envelope, submitted, waited for. The first failed read ends it."""
        made = self._create("backend_init_job", True, device)
        if made.kind is not JobAnswer.OK:
            return JobRequestAnswer(made.kind, None, made.status, f"CreateJob: {made.detail}")
        job = made.job
        assert job is not None
        up = self._upload(job, [("user_token.enc", self._envelopes.get(job, b""))])
        if up.kind is not JobAnswer.OK:
            return JobRequestAnswer(JobAnswer.UNKNOWN, job, up.status, f"init job {job}: upload: {up.detail}")
        sub = self._submit(job)
        if sub.kind is not JobAnswer.OK:
            return JobRequestAnswer(JobAnswer.UNKNOWN, job, sub.status, f"init job {job}: SubmitJob: {sub.detail}")
        deadline = time.monotonic() + self._init_wait
        while True:
            read = self.state(job)
            if read.kind is not ReadKind.GOOD:
                return JobRequestAnswer(JobAnswer.UNKNOWN, job, None, f"init job {job}: {read.detail}")
            if read.phase is Phase.COMPLETED:
                break
            if read.phase in (Phase.FAILED, Phase.CANCELLED):
                return JobRequestAnswer(JobAnswer.UNKNOWN, job, None, f"init job {job} ended {read.site_state}")
            if time.monotonic() >= deadline:
                return JobRequestAnswer(JobAnswer.UNKNOWN, job, None,
                                        f"init job {job} still {read.site_state} after {self._init_wait:g} s")
            if self._pause(self._init_poll):
                return JobRequestAnswer(JobAnswer.UNKNOWN, job, None, f"init job {job}: interrupted in its wait")
        backend = self._download(job, BACKEND_FILE)
        if isinstance(backend, ResultRead):
            return JobRequestAnswer(JobAnswer.UNKNOWN, job, None, f"init job {job}: {BACKEND_FILE}: {backend.detail}")
        self._backend = backend
        return JobRequestAnswer(JobAnswer.OK, job, 200)

    def create(self, request: JobRequest) -> JobRequestAnswer:
        # The order's name is the HEAppE job's Name: after a lost answer, ListJobsForCurrentUser finds it.
        return self._create(request.name, False, request.device)

    def upload(self, job: str, request: JobRequest) -> JobRequestAnswer:
        files = [("user_token.enc", self._envelopes.get(job, b"")),
                 ("circuit_0000.qasm", request.circuit.encode()),
                 ("run_kwargs.json", json.dumps({"shots": request.shots}).encode())]
        if self._backend is not None:
            files.append((BACKEND_FILE, self._backend))
        return self._upload(job, files)

    def submit(self, job: str) -> JobRequestAnswer:
        return self._submit(job)

    def state(self, job: str) -> StateRead:
        if not job.isdigit():
            return StateRead(ReadKind.ENDS, detail=f"{job!r} is not a HEAppE job id (a number)")
        response = send(self._heappe, "GET", "heappe/JobManagement/CurrentInfoForJob",
                        params={"SubmittedJobInfoId": job})
        data = json_or_none(response)
        value = data.get("State") if isinstance(data, dict) else None
        known = JOB_STATES.get(value) if isinstance(value, int) and not isinstance(value, bool) else None
        failed = read_failure(response, known is not None, f", unknown state {value!r}", _problem)
        if failed is not None:
            return StateRead(failed[0], detail=failed[1])
        assert isinstance(data, dict) and known is not None
        tasks = data.get("Tasks")
        if isinstance(tasks, list) and tasks and isinstance(tasks[0], dict) and isinstance(tasks[0].get("Id"), int):
            self._tasks[job] = tasks[0]["Id"]
        self._seconds[job] = _seconds(data)
        word, phase = known
        return StateRead(ReadKind.GOOD, phase, word)

    def _download(self, job: str, name: str) -> bytes | ResultRead:
        task = self._tasks.get(job)
        if task is None:
            read = self.state(job)
            task = self._tasks.get(job)
            if task is None:
                return ResultRead(read.kind if read.kind is not ReadKind.GOOD else ReadKind.ENDS,
                                  detail=read.detail or "the job has no task")
        body = {"SubmittedJobInfoId": int(job), "RelativeFilePath": f"/{job}/{task}/{name}"}
        response = send(self._heappe, "POST", "heappe/FileTransfer/DownloadFileFromCluster", json=body)
        if isinstance(response, NoAnswer):
            return ResultRead(ReadKind.MISSED, detail=response.detail)
        data = json_or_none(response)
        if response.is_success and (data is None or response.status_code == 204):
            return ResultRead(ReadKind.GOOD, ready=False, detail="no file yet")
        failed = read_failure(response, isinstance(data, str), ", not a file")
        if failed is not None:
            return ResultRead(failed[0], detail=failed[1])
        assert isinstance(data, str)
        try:
            return base64.b64decode(data, validate=True)
        except ValueError:
            return ResultRead(ReadKind.ENDS, detail=f"{name} is not base64")

    def result(self, job: str) -> ResultRead:
        content = self._download(job, RESULT_FILE)
        if isinstance(content, ResultRead):
            return content
        try:
            counts = loads_bounded(content)
        except ValueError:
            return ResultRead(ReadKind.ENDS, detail=f"malformed result ({RESULT_FILE} is not JSON)")
        if not isinstance(counts, dict | list):
            return ResultRead(ReadKind.ENDS, detail="malformed result (not counts)")
        return ResultRead(ReadKind.GOOD, True, self._seconds.get(job), counts)

    def check(self, device: str) -> CheckAnswer:
        try:
            ctx = self._lookup()
        except _Failed as failed:
            return CheckAnswer(failed.kind, failed.detail)
        return CheckAnswer(JobAnswer.OK, f"the token is accepted; project {self._project}, resource "
                           f"{ctx.resource_name}, HEAppE templates RunQInit and RunQExecute found",
                           {"project": self._project, "resource": ctx.resource_name})

    def close(self) -> None:
        self._userorg.close()
        self._heappe.close()
