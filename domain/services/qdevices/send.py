"""send: the dry run, and the live run that never sends an order twice.

Each event is a line made durable by the record before the next request. The order of writes is
the promise: "submitting" before the first request of an order, the job id as soon as the answer
is read, "uploaded" just before SubmitJob. No request that makes a job is ever retried, and nothing
is cancelled: a signal ends the call with a stop line and the job runs on at the site.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from dunscaith.domain.model.qdevices import rules as generic_rules
from dunscaith.domain.model.qdevices.answers import (
    ENDED_PHASES,
    JobAnswer,
    Phase,
    ReadKind,
    job_id_readable,
    job_id_url_safe,
    shown,
)
from dunscaith.domain.model.qdevices.budget import BudgetCheck, bound, charge, plan_bound
from dunscaith.domain.model.qdevices.errors import QdevicesError
from dunscaith.domain.model.qdevices.exits import EXIT_OF, Exit, StopReason
from dunscaith.domain.model.qdevices.identity import RecordIdentity
from dunscaith.domain.model.qdevices.lines import APP, FORMAT, Line, LineType, make
from dunscaith.domain.model.qdevices.manifest import Manifest, OrderSpec
from dunscaith.domain.model.qdevices.orders import OrderState, OrderView, RecordError, RunView, apply_line, fold
from dunscaith.domain.model.qdevices.redaction import clean_json
from dunscaith.domain.model.qdevices.resume import ResumeAction, SeenState, resume_unsubmitted
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName, Step
from dunscaith.domain.services.qdevices.errors import CallRefused
from dunscaith.domain.services.qdevices.site_runs import SiteRun, load_site_runs
from dunscaith.ports.clock import Clock
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.run_io import Reporter, UserRules
from dunscaith.ports.run_record import RecordAppender, RecordUnreadable, RecordWriteFailed, RunRecords
from dunscaith.ports.site import JobRequest, Site
from dunscaith.ports.site_lock import SiteLock

SIGNAL_NUMBERS = {"SIGHUP": 1, "SIGINT": 2, "SIGTERM": 15}


@dataclass(frozen=True, slots=True)
class SendRequest:
    manifest: Manifest
    manifest_path: str
    circuits: Mapping[int, str]  # order index -> OpenQASM text
    resume: str | None = None
    max_order: int | None = None
    older_records: tuple[str, ...] = ()
    host: str = ""
    pid: int = 0
    # older_records of the other sites: a lost order anywhere blocks a new run, an open one only on its site
    other_sites: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class UnderWay:
    order: int
    name: str
    job: str | None
    kind: str = "job"  # "init job": the VLQ init job made before the order, which has no line


@dataclass(frozen=True, slots=True)
class SendOutcome:
    exit: int
    record: str | None
    stop: StopReason | None = None
    detail: str = ""
    under_way: UnderWay | None = None


@dataclass(frozen=True, slots=True)
class PlannedStop:
    """The generic rule that would stop a live run before an order, every order before it taking
    job_seconds_limit (the worst case: the bound is an upper bound)."""

    reason: StopReason
    order: OrderSpec
    detail: str


@dataclass(frozen=True, slots=True)
class Plan:
    orders: tuple[OrderSpec, ...]
    bound_now: float
    bound_planned: float
    budget: int
    blockers: tuple[str, ...] = field(default=())
    stop: PlannedStop | None = None

    @property
    def exit(self) -> int:
        """What the live run would exit: refused (2) while an order blocks it, 1 when a rule would stop it."""
        if self.blockers:
            return int(Exit.UNKNOWN)
        if self.stop is not None:
            return int(EXIT_OF[self.stop.reason])
        return int(Exit.DONE)


class RecordWriteStopped(QdevicesError):
    """A line could not be made durable: no further request is made."""

    def __init__(self, detail: str, under_way: UnderWay | None, record: str | None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.under_way = under_way
        self.record = record


class ProgramStopped(QdevicesError):
    """An error of the program ended a live call; the original error is the cause."""

    def __init__(self, under_way: UnderWay | None, record: str | None) -> None:
        super().__init__("program error")
        self.under_way = under_way
        self.record = record


# The record's own fields, written by this app from the manifest, the host and its own tables: the
# filter never rewrites them, or a secret that is also a word of the record would make it unresumable.
FIXED_FIELDS = frozenset({"app", "format", "site", "site_device", "run", "manifest", "host", "path", "device",
                          "inode", "pid", "orders", "resume", "job_seconds_limit", "order", "name", "reason",
                          "outcome", "option", "status", "seconds", "counts_at_limit", "final", "bytes",
                          "step"})


def clean_fields(data: dict[str, Any], clean: Callable[[str], str]) -> dict[str, Any]:
    """A line's fields: the app's own field names and fixed values stay; every other string, at any
    depth and keys included (a site's result counts), passes the filter."""
    return {k: v if k in FIXED_FIELDS else clean_json(v, clean) for k, v in data.items()}


def blockers(runs: list[SiteRun], lost_only: bool = False) -> list[str]:
    """The lost and open orders of a site's records, each one line: they block a new run."""
    found = []
    for run in runs:
        for order in run.view.orders:
            label = f"order {order.index} ({order.name}) of {run.path}"
            if order.state is OrderState.LOST:
                found.append(f"{label} is lost: {lost_hint(run.view.site, run.path, order.index, run.own)}")
            elif order.state is OrderState.OPEN and not lost_only:
                if run.own:
                    found.append(f"{label} is open: collect it (qdevices send MANIFEST --live --resume {run.path})")
                else:  # this app never resumes another runner's record
                    found.append(f"{label} is open in a record of another runner: collect it with that runner, "
                                 f"or, when the site no longer gives its job, qdevices resolve {run.path} "
                                 f"{order.index} --gone")
    return found


def lost_hint(site: str, path: str | None, index: int, own: bool = True) -> str:
    """What to do with a lost order: where its job may be found, and the resolve command."""
    if not own:
        return f"resolve it (qdevices resolve {path} {index} --none), or settle it with its runner"
    try:
        where = TRAITS[SiteName(site)].job_list_hint
    except ValueError:
        where = ""
    command = f"resolve it (qdevices resolve {path} {index} --job ID | --none)"
    return f"{command}; {where}" if where else command


def lost_elsewhere(records: RunRecords, req: SendRequest) -> list[str]:
    """Lost orders of the other sites' records: a lost order blocks a new run until it is resolved."""
    found: list[str] = []
    for site, older in sorted(req.other_sites.items()):
        if site != req.manifest.site.value:
            found.extend(blockers(load_site_runs(records, site, older), lost_only=True))
    return found


class SendRun:
    def __init__(self, records: RunRecords, lock: SiteLock, clock: Clock, reporter: Reporter,
                 interrupts: Interrupts, user_rules: UserRules, poll_seconds: float,
                 redact: Callable[[str], str] = lambda s: s, host: str = "", site: Site | None = None) -> None:
        self.records = records
        self.lock = lock
        self.clock = clock
        self.reporter = reporter
        self.interrupts = interrupts
        self.user_rules = user_rules
        self.poll_seconds = poll_seconds
        self.redact = redact
        self.host = host
        self.site = site  # a live call's: a dry run has none

    def plan(self, req: SendRequest) -> Plan:
        """The dry run: everything checked, nothing sent, nothing written."""
        m = req.manifest
        runs = load_site_runs(self.records, m.site.value, req.older_records)
        limit = req.max_order or len(m.orders)
        to_send = tuple(o for o in m.orders if o.index <= limit)
        now = bound(r.view for r in runs)
        found = blockers(runs) + lost_elsewhere(self.records, req)
        return Plan(to_send, now, plan_bound(now, len(to_send), m.limits.job_seconds_limit),
                    m.limits.budget_seconds, tuple(found), _planned_stop(m, to_send, now))

    def live(self, req: SendRequest) -> SendOutcome:
        if self.site is None:
            raise TypeError("a live call needs its site: SendRun(site=...)")
        if not req.host:
            req = replace(req, host=self.host)
        # The lock comes before any record is read: the check and the sends must see the same records.
        with self.lock.hold(req.manifest.site.value):
            return _LiveCall(self, req, self.site).run()


def _planned_stop(m: Manifest, orders: tuple[OrderSpec, ...], now: float) -> PlannedStop | None:
    """The live run's own check before each order, with each order before it charged at the limit."""
    limit = m.limits.job_seconds_limit
    for k, spec in enumerate(orders):
        budget = BudgetCheck(now + k * limit, limit, m.limits.budget_seconds)
        why = generic_rules.before_order(spec, m.limits, budget)
        if why is not None:
            return PlannedStop(StopReason.BUDGET if not budget.allowed else StopReason.RULE, spec, why)
    return None


class _Stopped(Exception):
    def __init__(self, outcome: SendOutcome) -> None:
        super().__init__(outcome.detail)
        self.outcome = outcome


class _LiveCall:
    def __init__(self, owner: SendRun, req: SendRequest, site: Site) -> None:
        self.o = owner
        self.req = req
        self.m = req.manifest
        self.site = site
        self.appender: RecordAppender | None = None
        self.views: list[OrderView] = []
        self.others_bound = 0.0
        self.under_way: UnderWay | None = None
        self.prepared = False  # the site's init job finished in this call

    # --- the record ---------------------------------------------------------------------------
    def _line(self, kind: LineType, **data: Any) -> Line:
        return make(kind, self.o.clock.now(), **clean_fields(data, self.o.redact))

    def write(self, kind: LineType, **data: Any) -> None:
        assert self.appender is not None
        line = self._line(kind, **data)
        try:
            self.appender.append(line)
        except Exception as exc:
            raise RecordWriteStopped(str(exc), self.under_way, self.appender.path) from None
        index = line.order
        if index is not None:
            self.views[index - 1] = apply_line(self.views[index - 1], line)

    def stop(self, reason: StopReason, detail: str, order: OrderView | None = None,
             exit_code: int | None = None) -> _Stopped:
        job = order.job if order is not None else None
        self.write(LineType.STOP, reason=reason.value, order=order.index if order else None, job=job, detail=detail)
        code = exit_code if exit_code is not None else int(EXIT_OF[reason])
        return _Stopped(SendOutcome(code, self._path(), reason, detail,
                                    self.under_way))

    def _signal_stop(self, name: str, order: OrderView | None) -> _Stopped:
        return self.stop(StopReason.SIGNAL, f"{name}: the job runs on at the site", order,
                         128 + SIGNAL_NUMBERS.get(name, 0))

    def _check_signal(self, order: OrderView | None) -> None:
        name = self.o.interrupts.pending()
        if name is not None:
            raise self._signal_stop(name, order)

    def say(self, text: str) -> None:
        self.o.reporter.say(text)

    # --- the call -----------------------------------------------------------------------------
    def run(self) -> SendOutcome:
        try:
            return self._run()
        except _Stopped as stopped:
            return stopped.outcome
        except (RecordWriteStopped, CallRefused):
            raise
        except Exception as exc:
            if self.appender is None and isinstance(exc, RecordUnreadable | RecordWriteFailed):
                raise  # nothing is recorded or sent yet: the caller refuses the call in one line
            if self.appender is not None:
                try:
                    self.stop(StopReason.PROGRAM, f"{type(exc).__name__}", self._current_order())
                except Exception:  # the original error is what the user must see
                    pass
            raise ProgramStopped(self.under_way, self._path()) from exc
        finally:
            if self.appender is not None:
                self.appender.close()

    def _current_order(self) -> OrderView | None:
        return self.views[self.under_way.order - 1] if self.under_way else None

    def _run(self) -> SendOutcome:
        m, req = self.m, self.req
        site = m.site.value
        runs = load_site_runs(self.o.records, site, req.older_records, skip=req.resume)
        self.others_bound = bound(r.view for r in runs)
        may_send = req.resume is None or req.max_order is not None
        if req.resume is None:
            found = blockers(runs) + lost_elsewhere(self.o.records, req)
            if found:
                raise CallRefused(found[0] + (f" (and {len(found) - 1} more)" if len(found) > 1 else ""))
            _create_record(self)
        else:
            _open_resume(self, req.resume, may_send)
            found = blockers(runs) + lost_elsewhere(self.o.records, req) if may_send else []
            if may_send and found:
                may_send = False
                self.say(f"Not sending new orders: {found[0]}")
        limit = req.max_order or len(m.orders)

        for view in list(self.views):
            if view.state is OrderState.OPEN:
                self._collect(view)
        lost = [v for v in self.views if v.state is OrderState.LOST]
        if lost and may_send:
            v = lost[0]
            path = self._path()
            raise CallRefused(f"order {v.index} ({v.name}) is lost: resolve it before sending more: "
                              f"{lost_hint(self.m.site.value, path, v.index)}")
        if may_send:
            for view in list(self.views):
                if view.state is OrderState.UNSENT and view.index <= limit:
                    _SendOrder(self, m.order(view.index)).run()
        return self._end(limit)

    def _end(self, limit: int) -> SendOutcome:
        path = self._path()
        states = [v.state for v in self.views if v.index <= limit]
        if OrderState.LOST in states:
            lost = next(v for v in self.views if v.state is OrderState.LOST)
            return SendOutcome(int(Exit.UNKNOWN), path, detail=(
                f"order {lost.index} ({lost.name}) is lost: it is never sent again; "
                f"{lost_hint(self.m.site.value, path, lost.index)}"))
        if OrderState.OPEN in states:
            return SendOutcome(int(Exit.OPEN), path)
        return SendOutcome(int(Exit.DONE), path)

    # --- sending one order ----------------------------------------------------------------------
    def _order_dict(self, spec: OrderSpec, **extra: Any) -> dict[str, Any]:
        view = self.views[spec.index - 1]
        return {"index": spec.index, "name": spec.name, "shots": spec.shots, "circuit": spec.circuit,
                "site": self.m.site.value, "device": self.m.device, "job": view.job,
                "outcome": view.outcome.value if view.outcome else None, "seconds": view.seconds, **extra}

    def _unreadable_id_stops(self, view: OrderView) -> None:
        """The job id as recorded is what every later request uses: one that no URL can hold, or that
        held a secret (recorded with it taken out), is never put in a request."""
        job = view.job
        assert job is not None
        if job_id_readable(job) and self.o.redact(job) == job:
            return
        why = ("its job id cannot be put in a URL" if not job_id_url_safe(job)
               else "its job id held a secret and is recorded without it")
        raise self.stop(StopReason.STATUS_ERROR, f"{why}: it is never put in a request; resolve with --job ID "
                        "(the id the site shows) or --none", view)

    def _path(self) -> str | None:
        return self.appender.path if self.appender else None

    # --- collecting -----------------------------------------------------------------------------
    def _collect(self, view: OrderView) -> None:
        self._check_signal(view)
        self.under_way = UnderWay(view.index, view.name, view.job)
        assert view.job is not None
        multi = TRAITS[self.m.site].steps != (Step.CREATE,)
        if multi and not view.submitted:
            self._unreadable_id_stops(view)
            read = self.site.state(view.job)
            if read.kind is not ReadKind.GOOD:
                seen = SeenState.UNREADABLE
            elif read.phase is Phase.CONFIGURING:
                seen = SeenState.CONFIGURING
            else:
                seen = SeenState.PAST_CONFIGURING
            action = resume_unsubmitted(seen, view.created, view.uploaded)
            if action is ResumeAction.STAYS_OPEN:
                raise self.stop(StopReason.STATUS_ERROR, f"the state of job {view.job} cannot be read: "
                                f"{read.detail}", view)
            if action is ResumeAction.NOT_SUBMITTED:
                self.write(LineType.NOT_SUBMITTED, order=view.index, job=view.job,
                           detail="Configuring with no upload: SubmitJob was never sent")
                self.under_way = None
                return
            if action is ResumeAction.SUBMIT_UNKNOWN:
                raise self.stop(StopReason.SUBMIT_UNKNOWN, f"job {view.job} is Configuring and SubmitJob may "
                                "have reached the site: check the job at the site; when it never ran, "
                                "qdevices resolve RECORD ORDER --none", view)
        _Wait(self, view).run()

    def _after(self, spec: OrderSpec, seconds: float | None) -> None:
        why = generic_rules.after_result(spec, self.m.limits, seconds)
        if why is not None:
            raise self.stop(StopReason.RULE, why, None)
        why = self.o.user_rules.after_result(self._order_dict(spec))
        if why is not None:
            raise self.stop(StopReason.RULE, f"rules file: {why}", None)


class _SendOrder:
    """Sending one order: the rules and the budget checked, the init job made once per call, then the
    site's steps (create; or create, upload, submit), each line durable before the next request, and
    the wait for its job. A refusal, a request not sent or an unknown answer is written here."""

    def __init__(self, call: _LiveCall, spec: OrderSpec) -> None:
        self.call, self.spec = call, spec
        self.label = f"order {spec.index} ({spec.name})"

    def _view(self) -> OrderView:
        return self.call.views[self.spec.index - 1]

    def run(self) -> None:
        call, spec = self.call, self.spec
        call._check_signal(None)
        self._check_rules()
        traits = TRAITS[call.m.site]
        if traits.needs_init_job and not call.prepared:
            self._prepare()
        request = JobRequest(spec.index, spec.name, call.m.device, call.req.circuits[spec.index], spec.shots)
        call.under_way = UnderWay(spec.index, spec.name, None)
        call.write(LineType.SUBMITTING, order=spec.index, name=spec.name)
        answer = call.site.create(request)
        if not self._answered(Step.CREATE, answer.kind, answer.status, answer.detail):
            return
        job = answer.job
        assert job is not None
        call.under_way = UnderWay(spec.index, spec.name, job)
        if traits.steps == (Step.CREATE,):
            call.write(LineType.SUBMITTED, order=spec.index, job=job)
        else:
            call.write(LineType.CREATED, order=spec.index, job=job)
            call._unreadable_id_stops(self._view())
            call._check_signal(self._view())
            up = call.site.upload(job, request)
            if not self._answered(Step.UPLOAD, up.kind, up.status, up.detail):
                return
            call.write(LineType.UPLOADED, order=spec.index, job=job)  # just before SubmitJob, no check between
            sub = call.site.submit(job)
            if not self._answered(Step.SUBMIT, sub.kind, sub.status, sub.detail):
                return
            call.write(LineType.SUBMITTED, order=spec.index, job=job)
        call.say(f"{self.label}: job {shown(self._view().job or '')}")
        _Wait(call, self._view()).run()

    def _check_rules(self) -> None:
        """The generic rules with the budget's upper bound, then the user's rules file: a stop before any request."""
        call, spec, limits = self.call, self.spec, self.call.m.limits
        spent = call.others_bound + sum(charge(v, limits.job_seconds_limit) for v in call.views)
        budget = BudgetCheck(spent, limits.job_seconds_limit, limits.budget_seconds)
        why = generic_rules.before_order(spec, limits, budget)
        if why is not None:
            raise call.stop(StopReason.BUDGET if not budget.allowed else StopReason.RULE, why, None)
        why = call.o.user_rules.before_order(call._order_dict(spec))
        if why is not None:
            raise call.stop(StopReason.RULE, f"rules file: {why}", None)

    def _prepare(self) -> None:
        """The site's init job, once per call, before its first order."""
        call, spec = self.call, self.spec
        prep = call.site.prepare(call.m.device)
        if prep.kind is not JobAnswer.OK:
            call.under_way = UnderWay(spec.index, spec.name, prep.job, "init job") if prep.job else None
            call._check_signal(None)  # a signal that ended the init job's wait is the stop's reason
            raise call.stop(StopReason.PREPARE, f"the init job failed: {prep.detail}", None)
        call.prepared = True

    def _answered(self, step: Step, kind: JobAnswer, status: int | None, detail: str) -> bool:
        """True when the step succeeded; False when a refusal the rules file accepts ends this order."""
        call, spec = self.call, self.spec
        if kind is JobAnswer.OK:
            return True
        view = self._view()
        if kind is JobAnswer.NOT_SENT:
            self._not_sent(step, detail)
        if kind is JobAnswer.REFUSED:
            call.write(LineType.REFUSED, order=spec.index, status=status, detail=detail)
            call.say(f"{self.label}: refused ({detail})")
            call.under_way = None
            if call.o.user_rules.on_refusal(call._order_dict(spec, detail=detail)):
                return False
            raise call.stop(StopReason.REFUSAL, f"{self.label} was refused: {detail}", None)
        then = "" if view.job is not None else f"; {lost_hint(call.m.site.value, call._path(), spec.index)}"
        raise call.stop(StopReason.UNKNOWN, f"no good answer to a job request ({detail}): a job may exist; "
                        f"it is never sent again{then}", view)

    def _not_sent(self, step: Step, detail: str) -> None:
        """Nothing of this request left the machine: the step did not happen, and the call stops (the
        network is down; the next order would fare no better). Never a retry."""
        call, spec = self.call, self.spec
        job = self._view().job
        call.write(LineType.NOT_SENT, order=spec.index, job=job, step=step.value, detail=detail)
        if job is None:
            call.under_way = None
            limit = call.req.max_order or len(call.m.orders)
            then = f"it stays unsent, and a resume sends it (--resume RECORD --max-order {limit})"
        else:
            then = (f"job {job} was made and never submitted: a resume finds it Configuring and records it "
                    "not submitted (no device time)")
        raise call.stop(StopReason.NOT_SENT, f"{self.label}: {step.value} {detail}; {then}", self._view())


class _Wait:
    """The wait for one order's job: its state read at each poll (a line at each change), then its result,
    until it ends, the wait's deadline passes (a stop naming what was last seen) or a signal comes."""

    def __init__(self, call: _LiveCall, view: OrderView) -> None:
        assert view.job is not None
        self.call, self.index, self.name, self.job = call, view.index, view.name, view.job
        self.spec = call.m.order(view.index)
        self.deadline = call.o.clock.monotonic() + call.m.limits.wait_seconds
        self.first = True
        self.last_word: str | None = None
        self.result_phase = False
        self.missed: str | None = None

    def _view(self) -> OrderView:
        return self.call.views[self.index - 1]

    def run(self) -> None:
        call = self.call
        call._unreadable_id_stops(self._view())
        while True:
            call._check_signal(self._view())
            if not self.result_phase and self._read_state():
                return
            if self.result_phase and self._read_result():
                return
            remaining = self.deadline - call.o.clock.monotonic()
            if remaining <= 0:
                raise self._timed_out()
            name = call.o.interrupts.wait(min(call.o.poll_seconds, remaining))
            if name is not None:
                raise call._signal_stop(name, self._view())

    def _read_state(self) -> bool:
        """One read of the job's state; True when it ended without a result to fetch."""
        call, job = self.call, self.job
        read = call.site.state(job)
        if read.kind is ReadKind.MISSED:
            self.missed = f"status: {read.detail}"
            call.write(LineType.STATUS, order=self.index, job=job, state=None, missed=read.detail)
            return False
        if read.kind is not ReadKind.GOOD:
            raise call.stop(StopReason.STATUS_ERROR, f"the state of job {job}: {read.detail}", self._view())
        self.missed = None
        if self.first or read.site_state != self.last_word:
            call.write(LineType.STATUS, order=self.index, job=job, state=read.site_state, missed=None)
        self.first, self.last_word = False, read.site_state
        if read.phase is Phase.COMPLETED:
            self.result_phase = True
        elif read.phase in ENDED_PHASES:
            assert read.phase is not None
            call.write(LineType.RESULT, order=self.index, job=job, outcome=read.phase.value, seconds=None,
                       counts=None)
            call.say(f"order {self.index} ({self.name}): job {shown(job)} {read.phase.value}")
            call.under_way = None
            return True
        return False

    def _read_result(self) -> bool:
        """One read of the completed job's result; True when it is recorded."""
        call, job = self.call, self.job
        res = call.site.result(job)
        if res.kind is ReadKind.GOOD and res.ready:
            call.write(LineType.RESULT, order=self.index, job=job, outcome="completed", seconds=res.seconds,
                       counts=res.counts)
            call.say(f"order {self.index} ({self.name}): job {shown(job)} completed")
            call.under_way = None
            call._after(self.spec, res.seconds)
            return True
        if res.kind is ReadKind.ENDS:
            if res.expired:  # a resolve --expired needs two such stops 10 minutes apart
                raise call.stop(StopReason.RESULT_EXPIRED, f"the site no longer holds the result of job "
                                f"{job}: resume again in 10 minutes or more; after a second such "
                                f"answer, qdevices resolve RECORD {self.index} --expired", self._view())
            raise call.stop(StopReason.RESULT_ERROR, f"the result of job {job}: {res.detail}", self._view())
        self.missed = f"result: {res.detail or 'not ready'}"
        return False

    def _timed_out(self) -> _Stopped:
        call, job, current = self.call, self.job, self._view()
        if self.result_phase:
            return call.stop(StopReason.RESULT_ERROR, f"no result for job {job} within wait_seconds "
                             f"({self.missed})", current)
        if self.missed:
            return call.stop(StopReason.STATUS_ERROR, f"no good read of job {job} at the end of "
                             f"wait_seconds ({self.missed})", current)
        return call.stop(StopReason.WAIT, f"job {job} is still {self.last_word} after wait_seconds "
                         f"{call.m.limits.wait_seconds}", current)


# ---- the record a live call writes: a new one, or the one a resume continues -----------------------------

def _start_data(call: _LiveCall, resume: bool) -> dict[str, Any]:
    m = call.m
    return {"app": APP, "format": FORMAT, "site": m.site.value, "site_device": m.device, "run": m.run,
            "manifest": call.req.manifest_path, "host": call.req.host, "path": "", "device": 0, "inode": 0,
            "pid": call.req.pid, "orders": [o.name for o in m.orders], "resume": resume,
            "job_seconds_limit": m.limits.job_seconds_limit}

def _create_record(call: _LiveCall) -> None:
    first = call._line(LineType.START, **_start_data(call, False))
    call.appender = call.o.records.create(call.m.site.value, call.m.run, first)
    call.views = [OrderView(o.index, o.name) for o in call.m.orders]
    call.say(f"Record: {call.appender.path}")

def _open_resume(call: _LiveCall, path: str, may_send: bool) -> None:
    records = call.o.records
    try:
        read = records.read(path)
        view = fold(read.lines)
    except (RecordUnreadable, RecordError) as exc:
        raise CallRefused(f"{path}: {exc}") from None
    _check_same_run(call, view, path)
    if not records.is_in_records_folder(read.path) or not view.first_line_is_ours:
        raise CallRefused(f"{path} is not a record of this app's records folder: a resume takes only its own")
    if may_send:
        actual = read.actual
        if view.host != call.req.host:
            raise CallRefused(f"{path} was started on host {view.host}: a resume that sends is refused here "
                              "(without --max-order it still collects)")
        mismatch = RecordIdentity(view.host, view.path, view.device, view.inode).mismatch(actual)
        if mismatch:
            raise CallRefused(f"{path} is a copy or a moved record ({mismatch}): a copy sends nothing")
        if not records.is_newest_in_run_folder(read.path):
            raise CallRefused(f"{path} is not the newest record of its run folder: a resume that sends takes "
                              "only the newest")
    if read.torn_tail:
        call.say(f"{path}: the last line was cut by a crash mid-write; it is marked and the rest reads")
    call.appender = records.open_append(read.path)
    call.views = list(view.orders)
    start = _start_data(call, True)
    call.write(LineType.START, **start)

def _check_same_run(call: _LiveCall, view: RunView, path: str) -> None:
    m = call.m
    names = [o.name for o in m.orders]
    if view.site != m.site.value or view.site_device != m.device or [o.name for o in view.orders] != names:
        raise CallRefused(f"{path} is not a record of this manifest (site, device or orders differ)")
