"""``SlurmCliScheduler``: the scheduler port over Slurm's command-line tools.

- create: one ``sbatch --parsable --hold --job-name=<name> --comment=<nonce>``, the script on stdin,
  never retried; its answer classified by ``sbatch_answers`` (timeouts and lost replies are UNKNOWN).
- query: ONE ``squeue --states=all`` for all names (chunked only by argument length); exit codes
  from ``scontrol -o show job`` for ended jobs squeue cannot describe; with ``confirm_absent``, names
  squeue no longer lists confirmed in ``sacct`` when the cluster keeps accounting. A failed call
  makes the answer incomplete, never "done".
- release / hold (a *user* hold: as root ``scontrol hold`` is an admin hold) / requeue / cancel.
- cancel_if_not_started: one ``scancel -v --state=PENDING --user`` on exact ids (scancel filters the
  job list it loads from slurmctld just before it cancels, so a job that started meanwhile is
  skipped); what was stopped is read from its "Terminating job N" lines.
- stop_by_name (the emergency stop): ``scancel --name --user`` (running objects too).
- output_paths: ``StdOut``/``StdErr`` of ``scontrol -o show job``.
- times: ``sacct --jobs`` where the cluster keeps accounting, ``scontrol -o show job`` for the rest
  (``job_times.py``).
- a sweep as one job array (``ports.scheduler.CreatesArrays``, ``arrays.py``): one ``sbatch --array
  --hold``; task ``i`` of the array named ``S`` is the object ``A_i`` of element ``S-i``, and every method
  above takes it: a query for ``S-i`` asks squeue (``-r``: a task a line) and sacct about ``S`` as well, a
  stop by ``S-i`` cancels that task, by ``S`` every task. A pending task is held before it is cancelled,
  which splits it off the array's record (cancelled inside it, it would leave no trace).
"""

from __future__ import annotations

import dataclasses
import getpass
import re
import threading
import time
from collections.abc import Callable, Sequence

from dunscaith.adapters.scheduler.client_command import CommandResult, CommandRunner
from dunscaith.adapters.scheduler.slurm import arrays, batch_script, job_times, sacct, scontrol, squeue
from dunscaith.adapters.scheduler.slurm.chunking import chunk
from dunscaith.adapters.scheduler.slurm.config import SlurmClusterConfig, clusters_args
from dunscaith.adapters.scheduler.slurm.controller import cluster_env, controller
from dunscaith.adapters.scheduler.slurm.sbatch_answers import classify
from dunscaith.adapters.scheduler.slurm.states import UnknownState, ended_exit_code, object_state
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import (
    ENDED,
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

# How long the output paths of an array's other tasks, read with one task's, are used (a task's %j changes when
# it starts; a sweep's supervisor asks for every element's within a second or two of releasing the array).
_TASK_PATHS_KEPT = 30.0

# Ended states whose exit code squeue cannot show; COMPLETED is 0:0 by definition, CANCELLED says nothing.
_NEEDS_EXIT_CODE = ENDED - {ObjectState.COMPLETED, ObjectState.CANCELLED}
_MEMO_FROM = 8  # names: a poll of more (a sweep's) keeps its rows for the next one


class SlurmCliScheduler:
    def __init__(self, config: SlurmClusterConfig, say: Callable[[str], None] | None = None) -> None:
        """``say``: where a line goes about a call that has not answered for 10 s, while it waits."""
        self.config = config
        self._say = say
        self._runner = CommandRunner(config.bin_dir, config.env, None if say is None else self._waiting)
        self._user = config.user or getpass.getuser()
        self._lock = threading.Lock()
        self._cluster_config: dict[str, str] | None = None
        self._cluster_config_failure = ""  # why the last `scontrol show config` did not answer
        # (job id, end time) → (exit code, signal): an ended job's code never changes until it runs again.
        self._exit_codes: dict[tuple[str, str], tuple[int | None, int | None]] = {}
        # task id → (when read, its output paths): the other tasks of an array whose paths one call gave
        self._task_paths: dict[str, tuple[float, OutputPaths]] = {}
        # What a poll of many names (a sweep's elements) need not work out again each time: the rows of the
        # last answer by their text, each row's view, and the names asked with what they ask squeue for.
        self._rows = squeue.RowMemo()
        self._views: dict[int, tuple[squeue.SqueueRow, ObjectView]] = {}
        self._asking: tuple[tuple[str, ...], list[str], frozenset[str], list[list[str]]] | None = None

    @property
    def user(self) -> str:
        return self._user

    def _waiting(self, call: str, waited: float, timeout: float) -> None:
        if self._say is not None:
            self._say(controller(cluster_env(self.config.env)).waiting(call, waited, timeout))

    # ---- the cluster's own settings, read once ----------------------------------------------
    def cluster_config(self) -> dict[str, str] | None:
        with self._lock:
            if self._cluster_config is None:
                result = self._run("scontrol", [*self._clusters_arg(), "show", "config"])
                if result.ok:
                    self._cluster_config = scontrol.parse_config(result.stdout)
                else:
                    self._cluster_config_failure = result.failure()
            return self._cluster_config

    def submit_timeout(self) -> float:
        """Never below the cluster's MessageTimeout: sbatch may legitimately wait that long per try."""
        config = self.cluster_config()
        timeout = scontrol.message_timeout(config) if config else None
        if timeout is None:
            return max(self.config.submit_timeout, self.config.submit_timeout_unknown_floor)
        return max(self.config.submit_timeout, 2 * timeout + self.config.submit_timeout_margin)

    def accounting(self) -> bool:
        if self.config.accounting is not None:
            return self.config.accounting
        config = self.cluster_config()
        return bool(config) and scontrol.accounting_enabled(config or {})

    # ---- create ---------------------------------------------------------------------------------
    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        """Slurm honours every need; of sbatch's own options, those dunscaith sets itself are refused."""
        try:
            batch_script.check_options(options)
        except batch_script.SpecRefused as exc:
            return str(exc)
        return None

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        try:
            script = batch_script.script_for(spec)
            args = batch_script.sbatch_args(spec, self.config.clusters)
        except batch_script.SpecRefused as exc:
            return CreateAnswer(CreateOutcome.REFUSED, detail=f"{exc}; nothing was sent")
        timeout = self.submit_timeout()
        # ObjectSpec.env reaches the job through sbatch's own environment (sbatch exports it by default);
        # the cluster's env (SLURM_CONF, ...) wins, since it is what reaches the cluster at all.
        runner = self._runner.with_env(spec.env) if spec.env else self._runner
        # One request, never retried.
        result = runner.run("sbatch", args, timeout=timeout, stdin=script, cwd=self.config.workdir)
        return classify(result.returncode, result.stdout, result.stderr, timed_out=result.timed_out,
                        spawn_error=result.spawn_error)

    # ---- a sweep as one job array (CreatesArrays) ------------------------------------------------
    def array_refusal(self, count: int, largest_index: int, scripts: Sequence[str | None] = ()) -> str | None:
        """MaxArraySize of ``scontrol show config``: task indices run from 0 to MaxArraySize - 1, and 0 or 1
        turns arrays off; and the elements' ``#SBATCH`` lines, sbatch's options for the whole array, must be
        the same in every script. A script over the cluster's max_script_size is refused by
        ``create_array_held``, which sees the elements."""
        if count < 1:
            return "an array has at least one element"
        if len({arrays.directives(script) if script is not None else () for script in scripts}) > 1:
            return ("the elements' scripts carry different #SBATCH lines, and an array's tasks share one set of "
                    "sbatch options")
        config = self.cluster_config()
        if config is None:
            return f"the cluster's MaxArraySize could not be read ({self._cluster_config_failure})"
        limit = scontrol.max_array_size(config)
        if limit is None:
            return "the cluster's configuration gives no MaxArraySize"
        if limit <= 1:
            return f"job arrays are turned off on this cluster (MaxArraySize = {limit})"
        if largest_index >= limit:
            return (f"index {largest_index} is above this cluster's MaxArraySize ({limit}: array task indices "
                    f"0–{limit - 1})")
        return None

    def create_array_held(self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]],
                          max_running: int | None) -> CreateAnswer:
        """ONE ``sbatch --parsable --hold --array=<indices>[%N] --job-name=<sweep> --comment=<nonce>``, the
        dispatching script (``arrays.array_script``) on stdin, never retried; its answer classified as a
        single job's (``sbatch_answers``): a lost reply is UNKNOWN, and the tasks are then found by their
        element names and the nonce. Elements that differ in anything but their command or script are a
        caller's mistake (ValueError): an array has one nonce, one set of needs and options."""
        if not elements:
            raise ValueError("an array has at least one element")
        first = elements[0][1]
        for index, spec in elements:
            if spec.name != arrays.element(sweep, index):
                raise ValueError(f"element {index} of {sweep} is named {spec.name!r}, not "
                                 f"{arrays.element(sweep, index)!r}")
            same = (spec.nonce, spec.workdir, dict(spec.env), spec.options, spec.resources)
            if same != (first.nonce, first.workdir, dict(first.env), first.options, first.resources):
                raise ValueError(f"element {index} of {sweep} differs from element {elements[0][0]} in its nonce, "
                                 "workdir, env, options or needs: an array's tasks share them")
        try:
            indices = arrays.array_spec([index for index, _ in elements], max_running)
        except ValueError as exc:
            raise ValueError(f"sweep {sweep}: {exc}") from None
        try:
            script = arrays.array_script(elements)
            args = batch_script.sbatch_args(dataclasses.replace(first, name=sweep), self.config.clusters)
        except batch_script.SpecRefused as exc:
            return CreateAnswer(CreateOutcome.REFUSED, detail=f"{exc}; nothing was sent")
        too_large = self._script_too_large(script)
        if too_large:
            return CreateAnswer(CreateOutcome.REFUSED, detail=f"{too_large}; nothing was sent")
        args.insert(args.index("--parsable"), f"--array={indices}")
        runner = self._runner.with_env(first.env) if first.env else self._runner
        # One request, never retried.
        result = runner.run("sbatch", args, timeout=self.submit_timeout(), stdin=script, cwd=self.config.workdir)
        return classify(result.returncode, result.stdout, result.stderr, timed_out=result.timed_out,
                        spawn_error=result.spawn_error)

    def _script_too_large(self, script: str) -> str:
        size = len(script.encode())
        limit = scontrol.max_script_size(self.cluster_config() or {})  # read once, as submit_timeout reads it
        if size <= limit:
            return ""
        return (f"the array's batch script is {size} bytes, above the cluster's max_script_size ({limit} "
                "bytes): fewer elements, or shorter element scripts")

    def task_object(self, array_id: ObjectId, index: int) -> ObjectId:
        return ObjectId(arrays.task_id(array_id, index))

    # ---- actions on one object ----------------------------------------------------------------
    def release(self, object_id: ObjectId) -> None:
        """Release a held object; releasing one already released (pending, running, ended) changes nothing.

        Slurm answers "Job has already finished" for any ended job; one that ended without ever being
        released (cancelled while held, so never eligible) cannot be released, and that is an error.
        """
        args = ["release", object_id]
        result = self._run("scontrol", [*self._clusters_arg(), *args])
        said = [m for ln in result.stderr.splitlines() if (m := _ARRAY_ANSWER.match(ln.strip()))]
        if said and arrays.split_task_id(object_id) is None and result.ran:
            # an array's id: scontrol answers per group of its tasks ("51_1,3: No error", "51_2: Job has already
            # finished") and exits 1 if any had ended. The others were released all the same, and each element
            # learns of its own ended task from its own query: only another answer is an error.
            failed = [m.group(0) for m in said if m.group(2) not in ("No error", "Job has already finished")]
            if failed:
                raise SchedulerError(f"scontrol release {object_id}: {'; '.join(failed)}")
            return
        try:
            self._check(result, "scontrol", args)
        except SchedulerError as exc:
            if "Job has already finished" not in str(exc):
                raise
            if self._job_facts(object_id).get("EligibleTime", "Unknown") == "Unknown":
                raise SchedulerError(f"object {object_id} ended before it was ever released") from None

    def hold(self, object_id: ObjectId) -> None:
        """A *user* hold (``uhold``: as root ``hold`` is an admin hold). Only a pending object can be held:
        Slurm accepts ``uhold`` on a running job and does nothing, so the state is checked first."""
        state = self._job_facts(object_id).get("JobState", "")
        if state != "PENDING":
            raise SchedulerError(f"object {object_id} is {state or 'unknown'}; only a pending object can be held")
        self._act("scontrol", ["uhold", object_id])

    def requeue(self, object_id: ObjectId) -> None:
        self._act("scontrol", ["requeue", object_id])

    def cancel(self, object_id: ObjectId) -> None:
        """Cancel; an ended object is left as it is. scancel says nothing for an id slurmctld does not
        know, so the id is checked first and an unknown one is an error. A pending task of an array is held
        first, which splits it off its array's record: cancelled while still in it, a task leaves no trace
        (no line in squeue, no row in sacct), and its end could never be learnt."""
        state = self._job_facts(object_id).get("JobState", "")
        if state and object_state(state, "") in ENDED:
            return
        if state == "PENDING" and arrays.split_task_id(object_id) is not None:
            self._act("scontrol", ["uhold", object_id])  # a record of its own first (_split_off)
        self._act("scancel", [object_id])

    def _job_facts(self, object_id: ObjectId) -> dict[str, str]:
        result = self._run("scontrol", [*self._clusters_arg(), "-o", "show", "job", object_id])
        if not result.ok:
            raise SchedulerError(f"scontrol show job {object_id}: {result.failure()}")
        return scontrol.parse_job_line(result.stdout)

    def _act(self, program: str, args: list[str], idempotent: Sequence[str] = ()) -> None:
        full = [*self._clusters_arg(), *args] if program == "scontrol" else [*args, *self._clusters_arg()]
        self._check(self._run(program, full), program, args, idempotent)

    def _check(self, result: CommandResult, program: str, args: list[str], idempotent: Sequence[str] = ()) -> None:
        """Nothing when ``result`` says the action was done; else a SchedulerError saying why not."""
        if result.ran and any(s in result.stderr for s in idempotent):
            return
        if result.ok and not _stderr_error(result.stderr):
            return
        what = f"{program} {' '.join(args)}"
        if result.timed_out:
            raise SchedulerError(f"{what}: no answer in time; it may or may not have taken effect")
        raise SchedulerError(f"{what}: {result.failure() if not result.ok else _first_error(result.stderr)}")

    # ---- query ----------------------------------------------------------------------------------
    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        """For a name ``S-i`` (an element of sweep ``S``) squeue and sacct are asked about ``S`` too, in the
        same call: task ``i`` of an array named ``S`` is that element's object (``arrays.py``)."""
        wanted = sorted(set(names))
        if not wanted:
            return QueryResult((), True)
        key = tuple(wanted)
        if self._asking is None or self._asking[0] != key:
            with_arrays = _with_arrays(wanted)
            self._asking = (key, with_arrays, frozenset(wanted), chunk(with_arrays))
        _, with_arrays, wanted_set, groups = self._asking
        rows, asked, problems = self._squeue_rows(with_arrays, groups)
        named = [(r, element) for r in rows if (element := r.element()) in wanted_set]
        rows = [r for r, _ in named]
        views, code_problems = self._views_from_squeue(rows)
        problems += code_problems
        seen_names = {element for _, element in named}
        absent = [n for n in wanted if _answered(n, asked) and n not in seen_names]
        if absent and confirm_absent and self.accounting():
            found, sacct_problem = self._from_accounting(absent)
            views += found
            if sacct_problem:
                problems.append(sacct_problem)
        return QueryResult(tuple(views), complete=not problems, detail="; ".join(problems))

    def _squeue_rows(self, names: Sequence[str], groups: list[list[str]] | None = None,
                     ) -> tuple[list[squeue.SqueueRow], set[str], list[str]]:
        """Every job carrying any of ``names`` (tasks of arrays one a line), the names squeue answered for,
        and what went wrong. One squeue, chunked only by argument length (``groups``: as chunked already)."""
        problems: list[str] = []
        rows: list[squeue.SqueueRow] = []
        asked: set[str] = set()
        for group in groups if groups is not None else chunk(names):
            result = self._run("squeue", squeue.squeue_args(group, self.config.clusters))
            if not result.ok:
                problems.append(result.failure())
                continue
            try:
                rows += squeue.parse(result.stdout, self._rows if len(names) > _MEMO_FROM else None)
            except (squeue.SqueueParseError, UnknownState) as exc:
                problems.append(f"squeue: {exc}")
                continue
            asked.update(group)
        return [r for r in rows if r.name in asked], asked, problems

    def _views_from_squeue(self, rows: Sequence[squeue.SqueueRow]) -> tuple[list[ObjectView], list[str]]:
        # The very rows of the last answer (RowMemo) keep their views: a view kept is its row's alone (below).
        known, kept = self._views, {}
        views: list[ObjectView | None] = []
        todo: list[tuple[int, squeue.SqueueRow, ObjectState]] = []
        for r in rows:
            held = known.get(id(r))
            if held is not None and held[0] is r:
                kept[id(r)] = held
                views.append(held[1])
            else:
                todo.append((len(views), r, object_state(r.slurm_state, r.reason)))
                views.append(None)
        missing = [r for _, r, state in todo
                   if state in _NEEDS_EXIT_CODE and (r.job_id, r.end_time) not in self._exit_codes]
        problems: list[str] = []
        if missing:
            problems += self._fetch_exit_codes(missing)
        for at, r, state in todo:
            code: int | None = None
            sig: int | None = None
            if state is ObjectState.COMPLETED:
                code, sig = 0, None
            elif state in _NEEDS_EXIT_CODE:
                if (r.job_id, r.end_time) not in self._exit_codes:
                    continue  # ended, but how is not known yet: left out, and the answer is incomplete
                code, sig = self._exit_codes[(r.job_id, r.end_time)]
            view = ObjectView(
                object_id=ObjectId(r.job_id), name=JobId(r.element()), nonce=_nonce(r.comment), state=state,
                owner=r.user, exit_code=code, signal=sig, reason=_reason(r.reason),
                started=r.started or state is ObjectState.RUNNING,
            )
            if state not in _NEEDS_EXIT_CODE:  # its view is its row's alone (an exit code read later is not)
                kept[id(r)] = (r, view)
            views[at] = view
        self._views = kept
        return [v for v in views if v is not None], problems

    def _fetch_exit_codes(self, rows: Sequence[squeue.SqueueRow]) -> list[str]:
        # One job: ask for it. Several: one `scontrol -o show job` for all (the same RPC squeue makes).
        args = [*self._clusters_arg(), "-o", "show", "job"] + ([rows[0].job_id] if len(rows) == 1 else [])
        result = self._run("scontrol", args)
        details = scontrol.parse_jobs(result.stdout) if result.ok else {}
        problems = []
        for r in rows:
            detail = details.get(r.job_id)
            if detail is None:
                problems.append(f"no exit code yet for ended job {r.job_id}"
                                + ("" if result.ok else f" ({result.failure()})"))
                continue
            self._exit_codes[(r.job_id, r.end_time)] = ended_exit_code(object_state(r.slurm_state, r.reason),
                                                                     detail.exit_code)
        return problems

    def _from_accounting(self, names: Sequence[str]) -> tuple[list[ObjectView], str]:
        lookback = int(self.config.accounting_lookback.total_seconds())
        wanted = set(names)
        views: list[ObjectView] = []
        whole: list[ObjectView] = []  # tasks read from an array's own record (``A_[1-5]``): below their own rows
        for group in chunk(_with_arrays(names)):
            result = self._run("sacct", sacct.sacct_args(group, lookback, self.config.clusters))
            if not result.ok:
                return views, f"sacct: {result.failure()}"
            try:
                rows = sacct.parse(result.stdout, group)
            except (sacct.SacctParseError, UnknownState) as exc:
                return views, f"sacct: {exc}"
            for r in rows:
                state = object_state(r.slurm_state, "")
                code, sig = ended_exit_code(state, r.exit_code)
                tasks = arrays.expand_task_ids(r.job_id)
                for object_id in tasks:
                    task = arrays.split_task_id(object_id)
                    name = r.name if task is None else arrays.element(r.name, task[1])
                    if name not in wanted:
                        continue
                    view = ObjectView(
                        object_id=ObjectId(object_id), name=JobId(name), nonce=_nonce(r.comment), state=state,
                        owner=r.user, exit_code=code, signal=sig, reason="from accounting (purged by slurmctld)",
                        started=r.started)
                    (views if tasks == [r.job_id] else whole).append(view)
        own = {v.object_id for v in views}
        return views + [v for v in whole if v.object_id not in own], ""

    # ---- stops ------------------------------------------------------------------------------------
    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        """Every object of ``name`` this user owns, running ones too; no store, no nonce check.

        ``scancel --name --user`` stops the jobs named ``name``: for a sweep's name every task of its arrays.
        An element's name ``S-i`` is no job name in Slurm: its tasks (task ``i`` of each array named ``S``) are
        cancelled by id. Pending tasks are held first, in one ``scontrol uhold A_i,A_j,...``, which splits each
        off its array's record, so that each ends with a record of its own (``_split_off``)."""
        rows, _, problems = self._squeue_rows(_with_arrays([name]))
        if problems:
            raise SchedulerError(f"squeue --name={name}: {'; '.join(problems)}")
        mine = [r for r in rows if r.user == self._user and object_state(r.slurm_state, r.reason) not in ENDED]
        by_name = [r for r in mine if r.name == name]  # plain jobs of that name, and every task of its arrays
        element_tasks = [r for r in mine if r.name != name and r.element() == name]
        self._split_off([r for r in by_name + element_tasks if r.array_task is not None])
        if element_tasks:
            result = self._run("scancel", [f"--user={self._user}", *self._clusters_arg(),
                                           *(r.job_id for r in element_tasks)])
            if not result.ok:
                raise SchedulerError(f"scancel {' '.join(r.job_id for r in element_tasks)}: {result.failure()}")
        result = self._run("scancel", [f"--name={name}", f"--user={self._user}", *self._clusters_arg()])
        if not result.ok:
            raise SchedulerError(f"scancel --name={name}: {result.failure()}")
        return [ObjectId(r.job_id) for r in by_name + element_tasks]

    def _split_off(self, tasks: Sequence[squeue.SqueueRow]) -> None:
        """Hold the pending ones of ``tasks``, in one ``scontrol uhold A_i,A_j,...``: each becomes a job record
        of its own. Cancelled while still in their array's record, pending tasks either vanish (one cancelled
        by id: no line in squeue, no row in sacct) or end as one record that no longer names them (the whole
        record cancelled: squeue and sacct then show the array's id alone). A list of ids, never a range
        ``A_[1,3]``: a hold of every task left in the record holds the record whole, and splits none.
        Best effort: a task that started or ended meanwhile is refused by scontrol and stopped (or left) as
        it is."""
        pending = [r.job_id for r in tasks if r.array_task is not None and r.slurm_state.startswith("PENDING")]
        for group in chunk(pending, prefix=""):
            self._run("scontrol", [*self._clusters_arg(), "uhold", ",".join(group)])

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        """One ``scancel -v --state=PENDING --user=<you>`` on the exact ids (chunked only by argument
        length). scancel (22.05) loads slurmctld's job list, keeps the ids that are pending and this
        user's, and cancels each at once: a job that started since the caller looked is skipped,
        silently. Verbose, it names each job it cancels ("Terminating job N") and each that failed
        ("Kill job error on job id N: ..."); an id slurmctld no longer lists, or lists as ended, is
        such an error ("Invalid job id specified"), as is one that ended in between ("already
        completing or completed"): neither has anything left to stop.

        A pending task of an array (``A_i``) of the user's is held first (``scontrol uhold``): only that splits
        a task still in its array's record off it, and scancel's filters match the whole record
        (``--state=PENDING A_5`` cancelled ``A_[1-3,5]``). Held, it cannot start before scancel; one that
        started in between is not pending to scancel, and the hold given to it is taken back at once
        (``scontrol release``)."""
        stopped: list[ObjectId] = []
        problems: list[str] = []
        ids = list(dict.fromkeys(object_ids))
        tasks = [i for i in ids if arrays.split_task_id(i) is not None]
        held, sendable, problem = self._hold_tasks(tasks)
        if problem:
            problems.append(f"{problem}; the tasks {', '.join(tasks)} were left as they are")
            ids = [i for i in ids if i not in tasks or i in sendable]
        answered: set[str] = set()
        for group in chunk(ids, prefix=""):
            group_stopped, problem = self._scancel_pending(group)
            if group_stopped is not None:
                stopped += group_stopped
                answered.update(group)
            if problem:
                problems.append(problem)
        # a task held above that scancel did not stop had started meanwhile: its hold is taken back, or a
        # requeue would bring it back held
        started = [i for i in held if i in answered and i not in stopped]
        for group in chunk(started, prefix=""):
            self._run("scontrol", [*self._clusters_arg(), "release", ",".join(group)])
        if problems:
            raise SchedulerError(f"stopped {', '.join(stopped) or 'nothing'}; {'; '.join(problems)}")
        return stopped

    def _scancel_pending(self, group: Sequence[str]) -> tuple[list[ObjectId] | None, str]:
        """One ``scancel -v --state=PENDING`` of ``group``: the ids it stopped (None when its answer was not
        read: it may or may not have stopped them), and the problem to report ("" when none)."""
        result = self._run("scancel", ["-v", "--state=PENDING", f"--user={self._user}",
                                       *self._clusters_arg(), *group])
        if result.timed_out or result.spawn_error or result.killed_by is not None:
            return None, (f"scancel --state=PENDING {' '.join(group)}: {result.failure()}; "
                          "it may or may not have stopped them")
        signalled, failed, other = _scancel_verbose(result.stderr)
        stopped = [ObjectId(i) for i in group if i in signalled and i not in failed]
        unexplained = [f for f in failed.values() if not any(n in f for n in _NOTHING_TO_STOP)] + other
        quiet_failure = result.returncode != 0 and not failed and "No active jobs match" not in result.stderr
        if not unexplained and quiet_failure:
            unexplained = [result.failure()]  # a failure that names no job: nothing says what happened
        return stopped, f"scancel --state=PENDING: {unexplained[0]}" if unexplained else ""

    def _hold_tasks(self, task_ids: Sequence[str]) -> tuple[list[str], list[str], str]:
        """Hold the user's pending ones of ``task_ids``, so that each is a record of its own before scancel's
        filters see it: one ``squeue --jobs`` for their states, one ``scontrol uhold A_i,A_j,...``. (the
        tasks it held that were not held before, the task ids scancel may be given, a problem). A task whose
        state squeue could not say is not given to scancel at all: in its array's record, scancel would stop
        its pending siblings with it."""
        if not task_ids:
            return [], [], ""
        rows: list[squeue.SqueueRow] = []
        for group in chunk(list(task_ids), prefix="--jobs="):
            result = self._run("squeue", squeue.squeue_job_args(group, self.config.clusters))
            if not result.ok and "Invalid job id specified" not in result.stderr:
                return [], [], f"squeue --jobs: {result.failure()}"
            try:
                rows += squeue.parse(result.stdout) if result.ok else []
            except (squeue.SqueueParseError, UnknownState) as exc:
                return [], [], f"squeue --jobs: {exc}"
        pending = [r for r in rows if r.user == self._user and r.slurm_state.startswith("PENDING")]
        for group in chunk([r.job_id for r in pending], prefix=""):
            self._run("scontrol", [*self._clusters_arg(), "uhold", ",".join(group)])
        was_free = [r.job_id for r in pending if object_state(r.slurm_state, r.reason) is not ObjectState.HELD]
        return was_free, list(task_ids), ""

    # ---- output ----------------------------------------------------------------------------------
    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        """Nothing announces a change here but a query: False at once (the caller sleeps to its poll)."""
        return False

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        """``StdOut`` and ``StdErr`` as slurmctld expanded them; None once it forgot the job (MinJobAge).

        A task of an array (``A_i``): one ``scontrol -o show job A`` gives every task's paths, kept a short
        while for the others (a sweep's supervisor asks for each element's as it releases the array, and
        500 calls took 7 s on the test Slurm, where one takes 15 ms)."""
        task = arrays.split_task_id(object_id)
        if task is not None:
            return self._task_output_paths(object_id, task[0])
        result = self._run("scontrol", [*self._clusters_arg(), "-o", "show", "job", object_id])
        if not result.ok:
            return None
        paths = scontrol.output_paths(result.stdout)
        return None if paths is None else OutputPaths(stdout=paths[0], stderr=paths[1])

    def _task_output_paths(self, task_id: str, array_id: str) -> OutputPaths | None:
        now = time.monotonic()
        with self._lock:
            kept = self._task_paths.pop(task_id, None)
            if kept is not None and now - kept[0] < _TASK_PATHS_KEPT:
                return kept[1]
            # the old ones dropped only when one is asked for (not at each of 500 tasks' asks: a pass over all)
            self._task_paths = {k: v for k, v in self._task_paths.items() if now - v[0] < _TASK_PATHS_KEPT}
        result = self._run("scontrol", [*self._clusters_arg(), "-o", "show", "job", array_id])
        if not result.ok:
            return None
        found = {k: (now, OutputPaths(stdout=out, stderr=err))
                 for k, (out, err) in scontrol.array_output_paths(result.stdout).items()}
        mine = found.pop(task_id, None)
        with self._lock:
            self._task_paths.update(found)
        return None if mine is None else mine[1]

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        """One ``sacct --jobs`` where the cluster keeps accounting; ``scontrol -o show job`` for each id it
        did not list (slurmdbd may not have it yet) or for all where there is no accounting."""
        wanted = list(dict.fromkeys(object_ids))
        found: dict[ObjectId, ObjectTimes] = {}
        problem = ""
        if wanted and self.accounting():
            for group in chunk(wanted):
                result = self._run("sacct", job_times.sacct_args(group, self.config.clusters))
                if not result.ok:
                    problem = f"sacct: {result.failure()}"
                    continue
                found.update({ObjectId(k): v for k, v in job_times.parse_sacct(result.stdout, group).items()})
        for object_id in (i for i in wanted if i not in found):
            result = self._run("scontrol", [*self._clusters_arg(), "-o", "show", "job", object_id])
            if not result.ok:
                if "Invalid job id" not in result.stderr:
                    problem = problem or f"scontrol show job {object_id}: {result.failure()}"
                continue
            times = job_times.from_scontrol(scontrol.parse_job_line(result.stdout))
            if times is not None:
                found[object_id] = times
        if problem and not found:
            raise SchedulerError(problem)
        return found

    # ---- helpers --------------------------------------------------------------------------------
    def _clusters_arg(self) -> list[str]:
        return clusters_args(self.config.clusters)

    def _run(self, program: str, args: Sequence[str], stdin: str | None = None) -> CommandResult:
        return self._runner.run(program, args, timeout=self.config.command_timeout, stdin=stdin)


def _with_arrays(names: Sequence[str]) -> list[str]:
    """``names`` and, for each element name ``S-i``, its sweep's ``S``: the job name of its array's tasks."""
    bases = {found[0] for n in names if (found := arrays.element_of(n)) is not None}
    return sorted(set(names) | bases)


def _answered(name: str, asked: set[str]) -> bool:
    """squeue answered for ``name``, and for an element name for its sweep's name too."""
    found = arrays.element_of(name)
    return name in asked and (found is None or found[0] in asked)


def _nonce(comment: str) -> Nonce | None:
    text = comment.strip()
    return Nonce(text) if text and text not in ("(null)", "N/A") else None


def _reason(reason: str) -> str:
    return "" if reason in ("None", "(null)") else reason


def _stderr_error(stderr: str) -> bool:
    """scancel can exit 0 yet print an error for a job it could not signal."""
    return any("error" in ln for ln in stderr.splitlines())


def _first_error(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[0] if lines else "(no message)"


# scontrol's answer per group of an array's tasks: "51_1,3: No error", "51_[2-4]: Job has already finished"
_ARRAY_ANSWER = re.compile(r"^([0-9]+_\S+): (.+)$")
_NOTHING_TO_STOP = ("Invalid job id specified", "already completing or completed")
_TERMINATING = re.compile(r"^scancel: Terminating job (\S+)")
_KILL_ERROR = re.compile(r"^scancel: error: Kill job error on job id (\S+?): (.*)$")


def _scancel_verbose(stderr: str) -> tuple[set[str], dict[str, str], list[str]]:
    """The ids ``scancel -v`` signalled, those it says failed (id → message), and any other error line.

    "No active jobs match ALL job filters" is not an error here: it only says nothing was pending.
    """
    signalled: set[str] = set()
    failed: dict[str, str] = {}
    other: list[str] = []
    for line in (ln.strip() for ln in stderr.splitlines()):
        if match := _TERMINATING.match(line):
            signalled.add(match.group(1))
        elif match := _KILL_ERROR.match(line):
            failed[match.group(1)] = line
        elif "error" in line and "No active jobs match" not in line:
            other.append(line)
    return signalled, failed, other
