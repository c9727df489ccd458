"""``GridEngineScheduler``: the scheduler port over Grid Engine's command-line tools (docs/gridengine.md).

- create: one ``qsub -h -terse -w e -N <name> -ac dunscaith_nonce=<nonce>``, the script on stdin, never
  retried; its answer classified by ``qsub.classify`` (a lost reply, "unable to send message to qmaster",
  a killed qsub are UNKNOWN: the job is found later by its name and nonce).
- query: ONE ``qstat -u USER -s prsz -xml`` per call for every name (pending, running, zombies); the nonce of
  a job seen for the first time from one ``qstat -j ID,ID -xml`` (the list has no context), then kept in the
  ledger; with ``confirm_absent``, an ended job (a zombie, or a name with no live job) from the ledger (deleted
  before it started: no accounting record ever) or ``qacct -j NAME``. A zombie with neither is left out:
  absent, which the domain treats as unknown until its deadline (never waits for qacct for ever).
- release ``qrls``, hold ``qhold`` (only a pending job: a running one would become ``hr`` and run on),
  cancel ``qdel``, requeue ``qmod -rj`` (Grid Engine requeues only a running job submitted rerunnable).
- cancel_if_not_started: ``qhold`` first (a held job cannot start), one ``qstat`` to see which are still not
  started, ``qdel`` those, ``qrls`` back any that had started (its hold was ours).
- stop_by_name: ``qdel`` of every live job (or array task) of the name, running ones too.
- a sweep as one array job (``-t START-END:STEP``, ``-tc N``): task ``i`` of the array named ``S`` is the
  object ``A.i`` of element ``S-i``.
"""

from __future__ import annotations

import getpass
import itertools
import math
import os
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from dunscaith.adapters.scheduler.client_command import CommandResult
from dunscaith.adapters.scheduler.gridengine import qacct, qstat, qsub
from dunscaith.adapters.scheduler.gridengine.commands import client_runner
from dunscaith.adapters.scheduler.gridengine.config import GridEngineConfig
from dunscaith.adapters.scheduler.gridengine.ledger import Entry, Ledger
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import (
    NOT_STARTED,
    CreateAnswer,
    CreateOutcome,
    ObjectSpec,
    ObjectState,
    ObjectTimes,
    ObjectView,
    OutputPaths,
    QueryResult,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.ports.scheduler import SchedulerError

_ELEMENT = re.compile(r"^(.+)-([1-9][0-9]*)$")
_TASK = re.compile(r"^([0-9]+)\.([0-9]+)$")
_DELETED = re.compile(r"has deleted job(?:-array task)? ([0-9]+(?:\.[0-9]+)?)")
_REGISTERED = re.compile(r"has registered the job(?:-array task)? ([0-9]+(?:\.[0-9]+)?) for deletion")
_MODIFIED = re.compile(r"modified hold of job(?:-array task)? ([0-9]+(?:\.[0-9]+)?)")
_NO_SUCH = re.compile(r'denied: job "([0-9.]+)" does not exist')
_CHUNK = 200  # ids per qdel/qhold/qrls/qstat -j call (argument length)
DEFAULT_MAX_TASKS = 75000  # max_aj_tasks of a default cell


def element_of(name: str) -> tuple[str, int] | None:
    match = _ELEMENT.match(name)
    return (match.group(1), int(match.group(2))) if match else None


def split_task(object_id: str) -> tuple[str, int] | None:
    match = _TASK.match(object_id)
    return (match.group(1), int(match.group(2))) if match else None


def _chunks(items: Sequence[str]) -> list[list[str]]:
    return [list(items[i : i + _CHUNK]) for i in range(0, len(items), _CHUNK)]


@dataclass(frozen=True, slots=True)
class _Live:
    """One live job or array task, as the list shows it."""

    object_id: str
    name: str  # the element's name for a task
    row: qstat.Row


class GridEngineScheduler:
    def __init__(self, config: GridEngineConfig) -> None:
        self.config = config
        self._runner = client_runner(config.bin_dir, config.env)
        self._user = config.user or getpass.getuser()
        self._ledger = Ledger(config.ledger_dir)
        self._lock = threading.Lock()
        self._nonces: dict[tuple[str, int | None], str | None] = {}  # (job id, submitted) → nonce
        self._details: dict[str, qstat.Detail] = {}  # job id → its last qstat -j
        self._accounting: dict[str, list[qacct.Record]] = {}  # job name → its records, read last
        self._seen: dict[str, set[str]] = {}  # job name → the ids of its jobs seen live
        self._max_tasks: int | None = None

    @property
    def user(self) -> str:
        return self._user

    # ---- create ---------------------------------------------------------------------------------
    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        try:
            qsub.check_options(options)
        except qsub.SpecRefused as exc:
            return str(exc)
        return qsub.needs_refusal(resources, self.config.parallel_environment)

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        try:
            script, shell = qsub.script_for(spec)
            args = qsub.qsub_args(spec, shell, self.config.parallel_environment)
        except qsub.SpecRefused as exc:
            return CreateAnswer(CreateOutcome.REFUSED, detail=f"{exc}; nothing was sent")
        return self._submit(args, script, spec, spec.name)

    def _submit(self, args: list[str], script: str, spec: ObjectSpec, name: str) -> CreateAnswer:
        cwd = spec.workdir or self.config.workdir or os.getcwd()
        runner = self._runner.with_env(spec.env) if spec.env else self._runner
        # One request, never retried.
        result = runner.run("qsub", args, timeout=self.config.submit_timeout, stdin=script, cwd=self.config.workdir)
        answer = qsub.classify(
            result.returncode, result.stdout, result.stderr, timed_out=result.timed_out, spawn_error=result.spawn_error
        )
        if answer.outcome is CreateOutcome.CREATED and answer.object_id is not None:
            # the nonce kept at once, in this host's ledger too: a job that ends before anyone lists it (a
            # supervisor killed right after the qrls) still carries it (the submission time is learnt later)
            with self._lock:
                self._nonces[(answer.object_id, None)] = spec.nonce
            self._ledger.put(Entry(answer.object_id, name, spec.nonce, None, cwd=str(cwd) if cwd else None))
        return answer

    # ---- a sweep as one array job (CreatesArrays) --------------------------------------------------
    def array_refusal(self, count: int, largest_index: int, scripts: Sequence[str | None] = ()) -> str | None:
        if count < 1:
            return "an array has at least one element"
        if any(s is not None and any(ln.startswith("#$") for ln in s.splitlines()) for s in scripts):
            return (
                "an element's script carries #$ lines, and an array's tasks share one set of qsub options: "
                "give them as scheduler options instead"
            )
        if count != largest_index:  # only 1..N is known to be one range from 1 without the indices themselves
            return (
                "Grid Engine's task ids are one range from 1, and these indices are not 1 to "
                f"{count:,} (an index 0, a step or a gap)"
            )
        limit = self.max_tasks()
        if limit is None:
            return "the cluster's max_aj_tasks could not be read (qconf -sconf)"
        if limit and largest_index > limit:
            return f"index {largest_index} is above this cluster's max_aj_tasks ({limit})"
        return None

    def max_tasks(self) -> int | None:
        if self._max_tasks is None:
            result = self._run("qconf", ["-sconf"])
            if not result.ok:
                return None
            found = re.search(r"^max_aj_tasks\s+([0-9]+)", result.stdout, re.MULTILINE)
            self._max_tasks = int(found.group(1)) if found else DEFAULT_MAX_TASKS
        return self._max_tasks

    def create_array_held(
        self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]], max_running: int | None
    ) -> CreateAnswer:
        """ONE ``qsub -h -terse -t START-END:STEP [-tc N] -N <sweep> -ac dunscaith_nonce=<nonce>``, a dispatching
        script on stdin (task ``$SGE_TASK_ID`` runs its element's command or script), never retried."""
        if not elements:
            raise ValueError("an array has at least one element")
        first = elements[0][1]
        for index, spec in elements:
            if spec.name != f"{sweep}-{index}":
                raise ValueError(f"element {index} of {sweep} is named {spec.name!r}, not {sweep}-{index}")
            same = (spec.nonce, spec.workdir, dict(spec.env), spec.options, spec.resources)
            if same != (first.nonce, first.workdir, dict(first.env), first.options, first.resources):
                raise ValueError(
                    f"element {index} of {sweep} differs from element {elements[0][0]} in its nonce, "
                    "workdir, env, options or needs: an array's tasks share them"
                )
        indices = sorted(index for index, _ in elements)
        spec_text = _task_range(indices)
        if spec_text is None:
            return CreateAnswer(
                CreateOutcome.REFUSED,
                detail=(
                    "Grid Engine's task ids are one range START-END:STEP from 1: these indices are not; nothing was "
                    "sent"
                ),
            )
        try:
            script = _array_script(elements)
            # the first element's spec under the sweep's name; what each task runs is in the array's script
            array_spec = replace(first, name=sweep, command=("true",), script=None)
            args = qsub.qsub_args(array_spec, "/bin/sh", self.config.parallel_environment)
        except qsub.SpecRefused as exc:
            return CreateAnswer(CreateOutcome.REFUSED, detail=f"{exc}; nothing was sent")
        tasks = ["-t", spec_text] + (["-tc", str(max_running)] if max_running else [])
        return self._submit(tasks + args, script, first, sweep)

    def task_object(self, array_id: ObjectId, index: int) -> ObjectId:
        return ObjectId(f"{array_id}.{index}")

    # ---- the list ---------------------------------------------------------------------------------
    def _list(self) -> tuple[list[qstat.Row] | None, str]:
        result = self._run("qstat", qstat.list_args(self._user))
        if not result.ok:
            return None, f"qstat: {result.failure()}"
        try:
            return qstat.parse_list(result.stdout), ""
        except qstat.QstatParseError as exc:
            return None, str(exc)

    @staticmethod
    def _live(rows: Sequence[qstat.Row]) -> list[_Live]:
        """Every live job and array task of the rows (zombies left out)."""
        found = []
        for row in rows:
            if row.zombie:
                continue
            if row.tasks is None:
                found.append(_Live(row.job_id, row.name, row))
            else:
                found += [_Live(f"{row.job_id}.{t}", f"{row.name}-{t}", row) for t in row.task_ids()]
        return found

    def _learn(self, job_ids: Sequence[str]) -> str:
        """``qstat -j`` for the jobs whose nonce is not known yet; what went wrong."""
        for group in _chunks(sorted(set(job_ids))):
            result = self._run("qstat", ["-j", ",".join(group), "-xml"])
            if not result.ok:
                return f"qstat -j: {result.failure()}"
            try:
                details, _ = qstat.parse_details(result.stdout)
            except qstat.QstatParseError as exc:
                return str(exc)
            with self._lock:
                for job_id, detail in details.items():
                    self._details[job_id] = detail
                    self._nonces[(job_id, detail.submitted)] = detail.nonce
                    self._nonces.pop((job_id, None), None)
            for detail in details.values():
                self._ledger.put(
                    Entry(
                        detail.job_id,
                        detail.name,
                        detail.nonce,
                        detail.submitted,
                        stdout=detail.stdout,
                        stderr=detail.stderr,
                        cwd=detail.cwd,
                    )
                )
        return ""

    def _nonce_of(self, job_id: str, name: str, listed: datetime | None) -> tuple[bool, str | None]:
        """(known, nonce) of the job ``job_id`` the list shows with time ``listed`` (its submission, or its start
        while it runs): the newest job of that id submitted by then (ids repeat after a qmaster restart)."""
        at = listed.timestamp() + 1 if listed is not None else None
        with self._lock:
            mine = [
                (when, nonce)
                for (known_id, when), nonce in self._nonces.items()
                if known_id == job_id and (when is None or at is None or when <= at)
            ]
        if mine:
            return True, max(mine, key=lambda m: m[0] or 0)[1]
        for entry in self._ledger.of(job_id):  # newest first
            if entry.name == name and (at is None or entry.submitted is None or entry.submitted <= at):
                with self._lock:
                    self._nonces[(job_id, entry.submitted)] = entry.nonce
                return True, entry.nonce
        return False, None

    # ---- query --------------------------------------------------------------------------------------
    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        wanted: set[str] = set(names)
        if not wanted:
            return QueryResult((), True)
        rows, problem = self._list()
        if rows is None:
            return QueryResult((), False, problem)
        bases = {found[0] for n in wanted if (found := element_of(n)) is not None}
        rows = [r for r in rows if r.name in wanted or r.name in bases]
        live = [item for item in self._live(rows) if item.name in wanted]
        views, problems = self._live_views(live)
        if confirm_absent:
            seen: set[str] = {v.object_id for v in views}
            live_names: set[str] = {v.name for v in views}
            ended, ended_problem = self._ended(wanted, live_names, [r for r in rows if r.zombie], seen)
            views += ended
            if ended_problem:
                problems.append(ended_problem)
        return QueryResult(tuple(views), complete=not problems, detail="; ".join(problems))

    def _live_views(self, live: Sequence[_Live]) -> tuple[list[ObjectView], list[str]]:
        """Each live job's or task's view, and what could not be said. A job whose nonce neither this process
        nor the host's ledger knows (made elsewhere, or its qsub's answer lost) is asked of one ``qstat -j``
        for all of them; one whose nonce is still unknown is left out (the answer is then incomplete)."""
        for item in live:
            self._seen.setdefault(item.row.name, set()).add(item.object_id)
        known = {i.row.job_id: self._nonce_of(i.row.job_id, i.row.name, qstat.list_time(i.row.submitted)) for i in live}
        problems = []
        unknown = sorted(job_id for job_id, (found, _) in known.items() if not found)
        if unknown:
            learnt = self._learn(unknown)
            if learnt:
                problems.append(learnt)
        views: list[ObjectView] = []
        for item in live:
            found, nonce = known[item.row.job_id]
            if not found:
                found, nonce = self._nonce_of(item.row.job_id, item.row.name, qstat.list_time(item.row.submitted))
            if not found:
                problems.append(f"the nonce of job {item.row.job_id} could not be read")
                continue
            state, started, reason = qstat.object_state(item.row.state)
            views.append(
                ObjectView(
                    object_id=ObjectId(item.object_id),
                    name=JobId(item.name),
                    nonce=Nonce(nonce) if nonce else None,
                    state=state,
                    owner=item.row.owner,
                    reason=reason,
                    started=started,
                )
            )
        return views, problems

    def _ended(
        self, wanted: set[str], live_names: set[str], zombies: Sequence[qstat.Row], live_ids: set[str]
    ) -> tuple[list[ObjectView], str]:
        """The ended objects of ``wanted``: those deleted before they started (the ledger), and those the
        accounting file has (``_read_accounting``). Ids repeat: of two views of one id, the newest job's."""
        views: dict[str, ObjectView] = {}
        newest: dict[str, float] = {}

        def offer(view: ObjectView, submitted: float) -> None:
            if view.object_id in live_ids or newest.get(view.object_id, -1.0) > submitted:
                return
            views[view.object_id], newest[view.object_id] = view, submitted

        for entry in self._ledger.named(wanted):
            if entry.deleted is not None:
                offer(
                    ObjectView(
                        object_id=ObjectId(entry.object_id),
                        name=JobId(entry.name),
                        nonce=Nonce(entry.nonce) if entry.nonce else None,
                        state=ObjectState.CANCELLED,
                        owner=self._user,
                        reason="deleted before it started",
                        started=False,
                    ),
                    float(entry.submitted or 0),
                )
        problem = self._read_accounting(wanted, live_names, zombies, live_ids, set(views))
        for records in self._accounting.values():
            for record in records:
                name = record.name if record.task is None else f"{record.name}-{record.task}"
                if name in wanted and record.owner in (self._user, ""):
                    offer(self._ended_view(record, name), record.submitted.timestamp() if record.submitted else 0.0)
        return list(views.values()), problem

    def _read_accounting(
        self,
        wanted: set[str],
        live_names: set[str],
        zombies: Sequence[qstat.Row],
        live_ids: set[str],
        explained: set[str],
    ) -> str:
        """One ``qacct -j NAME`` per name (per sweep for its elements) whose zombies, or jobs seen live and gone
        since, are not explained by what was read before, or a name with no live object not asked yet. What
        went wrong."""
        ask: set[str] = set()
        for name in wanted:
            base = element_of(name)
            job = base[0] if base is not None and base[0] not in wanted else name
            for candidate in {job, name}:
                known = {r.object_id for r in self._accounting.get(candidate, [])} | explained
                expected = {o for z in zombies if z.name == candidate for o in _objects(z)}
                expected |= self._seen.get(candidate, set()) - live_ids
                if expected - known or (candidate not in self._accounting and name not in live_names):
                    ask.add(candidate)
        problem = ""
        for job in sorted(ask):
            result = self._run("qacct", qacct.args(job))
            if result.ok:
                self._accounting[job] = qacct.parse(result.stdout)
            elif result.ran and qacct.not_found(result.stderr):
                self._accounting[job] = []
            else:
                problem = f"qacct -j {job}: {result.failure()}"
        return problem

    def _ended_view(self, record: qacct.Record, name: str) -> ObjectView:
        state, code, sig, reason = qacct.outcome(record)
        _, nonce = self._nonce_of(record.job_id, record.name, record.submitted)
        return ObjectView(
            object_id=ObjectId(record.object_id),
            name=JobId(name),
            nonce=Nonce(nonce) if nonce else None,
            state=state,
            owner=record.owner,
            exit_code=code,
            signal=sig,
            reason=reason or "from accounting (qacct)",
            started=record.started is not None,
        )

    # ---- actions on one object ------------------------------------------------------------------
    def _row_of(self, object_id: str) -> tuple[_Live | None, bool]:
        """(the live job or task of ``object_id``, whether the list answered at all)."""
        rows, problem = self._list()
        if rows is None:
            raise SchedulerError(problem)
        return next((i for i in self._live(rows) if i.object_id == object_id), None), True

    def _ended_known(self, object_id: str) -> tuple[bool, bool]:
        """(Grid Engine or the ledger knows ``object_id`` as ended, it ever started)."""
        for entry in self._ledger.of(object_id):
            if entry.deleted is not None:
                return True, False
        task = split_task(object_id)
        result = self._run("qacct", qacct.args(task[0] if task else object_id))
        if not result.ok:
            if result.ran and qacct.not_found(result.stderr):
                return False, False
            raise SchedulerError(f"qacct -j {object_id}: {result.failure()}")
        records = [r for r in qacct.parse(result.stdout) if r.object_id == object_id]
        return bool(records), any(r.started is not None for r in records)

    def release(self, object_id: ObjectId) -> None:
        """Release a held object; releasing one already released (pending, running, ended) changes nothing.
        One that ended without ever starting (deleted while held) cannot be released: an error."""
        result = self._run("qrls", [object_id])
        if result.ok and not _NO_SUCH.search(result.stdout + result.stderr):
            return
        if result.ran and _NO_SUCH.search(result.stdout + result.stderr):
            ended, started = self._ended_known(object_id)
            if ended and started:
                return
            if ended:
                raise SchedulerError(f"object {object_id} ended before it was ever released")
            raise SchedulerError(f"qrls {object_id}: Grid Engine knows no job {object_id}")
        raise SchedulerError(f"qrls {object_id}: {_failure(result)}")

    def hold(self, object_id: ObjectId) -> None:
        """Only a pending object can be held: Grid Engine holds a running one too (``hr``) and it runs on."""
        live, _ = self._row_of(object_id)
        if live is None:
            raise SchedulerError(
                f"object {object_id} is not a live job of {self._user}'s; only a pending object can be held"
            )
        state, _, _ = qstat.object_state(live.row.state)
        if state not in NOT_STARTED:
            raise SchedulerError(f"object {object_id} is {state}; only a pending object can be held")
        result = self._run("qhold", [object_id])
        if not result.ok:
            raise SchedulerError(f"qhold {object_id}: {_failure(result)}")
        again, _ = self._row_of(object_id)
        if again is not None and qstat.object_state(again.row.state)[0] not in NOT_STARTED:
            self._run("qrls", [object_id])  # it started meanwhile: the hold given to it is taken back
            raise SchedulerError(f"object {object_id} started meanwhile; only a pending object can be held")

    def requeue(self, object_id: ObjectId) -> None:
        """``qmod -rj``: Grid Engine puts back in the queue a running job submitted rerunnable (``-r y`` as a
        scheduler option, or a queue with ``rerun TRUE``); any other is refused in one line."""
        result = self._run("qmod", ["-rj", object_id])
        said = " ".join((result.stdout + " " + result.stderr).split())
        refused = ("not rerunable", "does not exist", "denied", "error", "not running", "invalid")
        if not result.ok or any(word in said.lower() for word in refused) or not said:
            raise SchedulerError(
                f"Grid Engine cannot requeue {object_id}: it requeues only a running job submitted "
                f"rerunnable (-r y){f' ({said})' if said else ''}"
            )

    def cancel(self, object_id: ObjectId) -> None:
        """Cancel; an ended object is left as it is, an id Grid Engine does not know is an error."""
        live, _ = self._row_of(object_id)
        if live is None:
            ended, _ = self._ended_known(object_id)
            if ended:
                return
            raise SchedulerError(f"object {object_id}: Grid Engine knows no live or ended job of that id")
        result = self._run("qdel", [object_id])
        self._record_deleted(result, [live])
        if not result.ok and not _DELETED.search(result.stdout) and not _REGISTERED.search(result.stdout):
            raise SchedulerError(f"qdel {object_id}: {_failure(result)}")

    def _record_deleted(self, result: CommandResult, live: Sequence[_Live]) -> list[str]:
        """The ids qdel says it deleted or registered for deletion; those deleted at once (never started)
        recorded in the ledger, since Grid Engine keeps no record of them."""
        said = result.stdout + "\n" + result.stderr
        deleted = set(_DELETED.findall(said))
        registered = set(_REGISTERED.findall(said))
        by_id = {i.object_id: i for i in live}
        now = time.time()
        for object_id in deleted:
            whole = [i for i in live if i.row.job_id == object_id and i.object_id != object_id]
            for item in [by_id[object_id]] if object_id in by_id else whole:
                submitted = qstat.list_time(item.row.submitted)
                _, nonce = self._nonce_of(item.row.job_id, item.row.name, submitted)
                self._ledger.put(
                    Entry(
                        item.object_id, item.name, nonce, int(submitted.timestamp()) if submitted else None, deleted=now
                    )
                )
        return sorted(deleted | registered)

    # ---- stops ------------------------------------------------------------------------------------
    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        """Every live object of ``name`` this user owns, running ones too: ``qdel`` of each (an element ``S-i``:
        task ``i`` of every array named ``S``; a sweep's name: every task of its arrays)."""
        rows, problem = self._list()
        if rows is None:
            raise SchedulerError(problem)
        base = element_of(name)
        mine = [i for i in self._live(rows) if i.row.owner == self._user]
        targets = [i for i in mine if i.name == name or i.row.name == name]
        if base is not None:
            targets = [i for i in targets if i.name == name]
        if not targets:
            return []
        stopped: list[str] = []
        for group in _chunks([i.object_id for i in targets]):
            result = self._run("qdel", group)
            stopped += self._record_deleted(result, targets)
            if not result.ran:
                raise SchedulerError(f"qdel {' '.join(group)}: {_failure(result)}")
        wanted = {i.object_id for i in targets}
        return [ObjectId(i) for i in stopped if i in wanted]

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        """Hold each first (a held job cannot start), then delete those the list shows not started; one that
        had started gets its hold taken back. Another user's, an ended one or an unknown id is left alone."""
        ids = list(dict.fromkeys(object_ids))
        rows, problem = self._list() if ids else ([], "")
        if rows is None:
            raise SchedulerError(f"stopped nothing; {problem}")
        before = {i.object_id: i for i in self._live(rows) if i.row.owner == self._user}
        candidates = [i for i in ids if i in before]
        if not candidates:
            return []
        for group in _chunks(candidates):
            self._run("qhold", group)  # an id that ended meanwhile is "denied ... does not exist": nothing to stop
        rows, problem = self._list()
        if rows is None:
            raise SchedulerError(f"stopped nothing; {problem}; the objects {', '.join(candidates)} may be held")
        now = {i.object_id: i for i in self._live(rows)}
        not_started = [i for i in candidates if i in now and qstat.object_state(now[i].row.state)[0] in NOT_STARTED]
        started = [i for i in candidates if i in now and i not in not_started and "h" not in before[i].row.state]
        for group in _chunks(started):
            self._run("qrls", group)  # the hold was ours: taken back
        return self._delete_not_started([now[i] for i in not_started])

    def _delete_not_started(self, items: Sequence[_Live]) -> list[ObjectId]:
        stopped: list[str] = []
        problems: list[str] = []
        for start in range(0, len(items), _CHUNK):
            group = items[start : start + _CHUNK]
            ids = [i.object_id for i in group]
            result = self._run("qdel", ids)
            stopped += [i for i in self._record_deleted(result, group) if i in ids]
            if not result.ran:
                problems.append(f"qdel {' '.join(ids)}: {_failure(result)}; it may or may not have stopped them")
        if problems:
            raise SchedulerError(f"stopped {', '.join(stopped) or 'nothing'}; {'; '.join(problems)}")
        return [ObjectId(i) for i in stopped]

    # ---- output ----------------------------------------------------------------------------------
    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        """Nothing announces a change here but a query: False at once (the caller sleeps to its poll)."""
        return False

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        """``-o``/``-e`` as given, else Grid Engine's default ``<cwd>/<name>.o<id>[.<task>]``; None for a job
        neither qstat nor this host's ledger knows."""
        task = split_task(object_id)
        job_id = task[0] if task else object_id
        self._learn([job_id])  # while it lives, qstat -j says (-o and -e as given); after, the ledger
        detail = self._details.get(job_id)
        if detail is None:
            entry = next(iter(self._ledger.of(job_id)), None)
            if entry is None:
                return None
            detail = qstat.Detail(
                job_id=job_id,
                name=entry.name,
                owner=self._user,
                nonce=entry.nonce,
                submitted=entry.submitted,
                cwd=entry.cwd,
                stdout=entry.stdout,
                stderr=entry.stderr,
            )
        return OutputPaths(stdout=_output(detail, "o", task), stderr=_output(detail, "e", task))

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        """Live jobs from one ``qstat -j``; ended ones from the ledger (deleted before they started) or
        ``qacct -j``."""
        wanted = list(dict.fromkeys(object_ids))
        found: dict[ObjectId, ObjectTimes] = {}
        if not wanted:
            return found
        jobs = sorted({(split_task(i) or (i, 0))[0] for i in wanted})
        details: dict[str, qstat.Detail] = {}
        rows, problem = self._list()
        if rows is None:
            raise SchedulerError(problem)
        live = {i.object_id for i in self._live(rows)}
        live_jobs = [j for j in jobs if j in {i.split(".")[0] for i in live}]
        for group in _chunks(live_jobs):
            result = self._run("qstat", ["-j", ",".join(group), "-xml"])
            if result.ok:
                with_details, _ = qstat.parse_details(result.stdout)
                details.update(with_details)
        for object_id in wanted:
            task = split_task(object_id)
            job_id, number = task if task else (object_id, 1)
            if object_id in live and job_id in details:
                detail = details[job_id]
                start = detail.starts.get(number)
                found[object_id] = ObjectTimes(
                    submitted=_epoch(detail.submitted), started=_epoch(start), ended=None, source="qstat"
                )
                continue
            times = self._ended_times(object_id)
            if times is not None:
                found[object_id] = times
        return found

    def _ended_times(self, object_id: str) -> ObjectTimes | None:
        for entry in self._ledger.of(object_id):
            if entry.deleted is not None:
                return ObjectTimes(
                    submitted=_epoch(entry.submitted), started=None, ended=_epoch(entry.deleted), source="ledger"
                )
        task = split_task(object_id)
        result = self._run("qacct", qacct.args(task[0] if task else object_id))
        if not result.ok:
            return None
        records = sorted(
            (r for r in qacct.parse(result.stdout) if r.object_id == object_id),
            key=lambda r: r.submitted or datetime.min.replace(tzinfo=UTC),
        )
        if not records:
            return None
        r = records[-1]
        return ObjectTimes(submitted=r.submitted, started=r.started, ended=r.ended, source="qacct")

    # ---- helpers --------------------------------------------------------------------------------
    def _run(self, program: str, args: Sequence[str]) -> CommandResult:
        return self._runner.run(program, args, timeout=self.config.command_timeout)


def _objects(row: qstat.Row) -> list[str]:
    """The object ids a list row names: the job's, or each of its array tasks'."""
    return [f"{row.job_id}.{t}" for t in row.task_ids()] if row.tasks else [row.job_id]


def _failure(result: CommandResult) -> str:
    if result.ran:
        lines = [ln.strip() for ln in (result.stderr + "\n" + result.stdout).splitlines() if ln.strip()]
        return lines[0] if lines else f"exit {result.returncode}"
    return result.failure()


def _epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _output(detail: qstat.Detail, stream: str, task: tuple[str, int] | None) -> str | None:
    given = detail.stdout if stream == "o" else detail.stderr
    suffix = f".{task[1]}" if task else ""
    if given is None:
        if detail.cwd is None:
            return None
        return f"{detail.cwd}/{detail.name}.{stream}{detail.job_id}{suffix}"
    path = (
        given.replace("$JOB_ID", detail.job_id)
        .replace("$JOB_NAME", detail.name)
        .replace("$TASK_ID", str(task[1]) if task else "undefined")
    )
    if detail.cwd is not None and not path.startswith("/"):
        path = f"{detail.cwd}/{path}"
    return path


def _task_range(indices: Sequence[int]) -> str | None:
    """``START-END:STEP`` naming exactly ``indices`` (sorted, from 1), or None when no one range does."""
    if not indices or indices[0] < 1:
        return None
    if len(indices) == 1:
        return f"{indices[0]}-{indices[0]}:1"
    step = math.gcd(*(b - a for a, b in itertools.pairwise(indices)))
    if step < 1 or list(range(indices[0], indices[-1] + 1, step)) != list(indices):
        return None
    return f"{indices[0]}-{indices[-1]}:{step}"


def _array_script(elements: Sequence[tuple[int, ObjectSpec]]) -> str:
    """One ``/bin/sh`` script for every task: task ``$SGE_TASK_ID`` runs its element's command, or its script
    from a file of its own (as a single job's script is run, ``qsub.wrapped``)."""
    lines = ["#!/bin/sh", 'case "$SGE_TASK_ID" in']
    for index, spec in elements:
        if spec.script is not None and spec.command:
            raise qsub.SpecRefused(f"element {index} has either a command or a script, not both")
        if spec.script is not None:
            if not spec.script.startswith("#!"):
                raise qsub.SpecRefused(f"element {index}'s batch script must start with #!")
            body = qsub.wrapped(spec.script).split("\n", 1)[1]
        else:
            body = qsub.command_script(spec.command).split("\n", 1)[1]
        lines += [f"{index})", body.rstrip("\n"), ";;"]
    lines += ["esac", 'echo "dunscaith: no element for task $SGE_TASK_ID" >&2', "exit 127", ""]
    return "\n".join(lines)
