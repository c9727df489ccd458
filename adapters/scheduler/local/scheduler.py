"""``LocalScheduler``: a real scheduler for this machine, its objects owned by ``dunscaith remote run``.

Objects live in ``<root>/local-scheduler/<object id>/`` (layout in ``layout.py``). Nothing runs until
``release``; every decision before the start is a step of a compare-and-set log (``steps.py``).

Release, and why it never starts an object twice
------------------------------------------------
1. take ``launch.lock`` (flock), the mark of "someone is responsible for starting this object";
2. append step ``release`` (HELD → PENDING);
3. append step ``start`` (PENDING → STARTED); a ``hold`` or ``cancel`` appended first wins instead;
4. spawn ``dunscaith remote run`` detached, handing it the launch lock's descriptor, so the lock stays
   held for the whole life of the process owner.

Only the actor whose ``start`` step was linked spawns, so a second release (from any process) finds
STARTED and does nothing. A crash is always visible afterwards, because the launch lock is released
by the kernel when its last holder dies:

- killed after 2, before 3: PENDING with nobody holding the launch lock. Nothing ran and nothing can
  start it; a later ``release`` takes the lock and carries on from step 3 (``query`` says so in the
  object's reason). ``hold`` and ``cancel`` work on it as on any pending object.
- killed after 3, before 4 (or the process owner died before its instance existed): STARTED, no
  launch lock held, no instance. Nothing ran and nothing ever will: the object is reported
  BOOT_FAIL, final, and a new attempt is the way on. (A reading that finds it so takes the lock, the
  steps and the instance again once: a start decided by another process after the first probe reads the
  same way, and the second probe, made once the start is known, sees its owner.)

Started objects are read from their instance directory (``instance.py``) and cancelled with
``dunscaith remote terminate``. ``requeue`` is refused: an instance directory runs one worker once.

``wait_for_change`` wakes the supervisor at an object's end rather than at its next poll: one thread
per started object waits, blocking, for a shared ``flock`` on its ``launch.lock``, which the kernel
grants only once the process owner (which holds the lock for its whole life, and records the outcome
before it exits) is gone. A thread costs no CPU while it waits.

``cancel_if_not_started`` appends its ``cancel`` step only while the object is still before its start
(the same compare-and-set as a release's ``start``): whichever step is linked first wins, so an object
a release starts meanwhile is left alone.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Container, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from dunscaith.adapters.durable.lock import FlockLock, LockHeld, is_held
from dunscaith.adapters.durable.private_dir import ensure_record_folder
from dunscaith.adapters.durable.private_read import read_private
from dunscaith.adapters.durable.publish import publish
from dunscaith.adapters.durable.sync import sync_dir
from dunscaith.adapters.scheduler.local import spawn
from dunscaith.adapters.scheduler.local.group import group_ended
from dunscaith.adapters.scheduler.local.instance import InstanceReading, read_instance
from dunscaith.adapters.scheduler.local.layout import (
    ENV,
    INSTANCE_DIR,
    LAUNCH_LOCK,
    OBJECT,
    OOM_MARK,
    SCRIPT,
    STDERR,
    STDOUT,
    TIME_LIMIT_MARK,
    StoredSpec,
    decode_spec,
    encode_env,
    is_object_id,
    name_digest,
    new_object_id,
)
from dunscaith.adapters.scheduler.local.steps import Action, Phase, Steps, read_steps, step_at, try_append
from dunscaith.adapters.scheduler.local.views import view_of
from dunscaith.adapters.scheduler.local.watch import ObjectsWatch, watch_objects
from dunscaith.domain.model.jobs.ids import JobId, ObjectId
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
from dunscaith.domain.model.jobs.recovery_settings import SignalBefore
from dunscaith.domain.model.jobs.resources import SUBMIT_FLAG, Need, Resources
from dunscaith.domain.model.remote.control import OUTCOME
from dunscaith.domain.model.strict_json import DecodeError
from dunscaith.ports.scheduler import SchedulerError

DIRECTORY = "local-scheduler"
MAX_OBJECT_FILE = 16 * 1024 * 1024  # the spec carries argv, which the kernel bounds far below this
_PROBE_PATIENCE = 0.5  # a status probe holds a shared lock for an instant; a real holder for longer
_CAS_ATTEMPTS = 20  # each lost compare-and-set means another actor decided; the log is short
_HELD_OR_AFTER = frozenset({Phase.HELD, Phase.CANCELLED, Phase.STARTED})  # where a hold has nothing to append
_CANCELLED_OR_STARTED = frozenset({Phase.CANCELLED, Phase.STARTED})  # where a cancel has nothing to append


class LocalScheduler:
    def __init__(
        self,
        root: Path,
        *,
        dunscaith: Sequence[str] | None = None,
        grace_seconds: float = 10.0,
        terminate_wait_seconds: float = 30.0,
        checkpoint: Callable[[str], None] | None = None,
        terminate: Terminate | None = None,
    ) -> None:
        """Objects under ``root/local-scheduler``. ``checkpoint`` is a fault-injection seam for tests,
        called after each durable step of a release ("released", "start-decided", "spawned").
        ``terminate`` asks an instance's wrapper to end its worker in this process (the composition root
        hands over the ``remote terminate`` use case); without it, ``dunscaith remote terminate`` is run."""
        self.base = ensure_record_folder(root / DIRECTORY, root)  # checked here, before any job is recorded
        self._dunscaith = tuple(dunscaith) if dunscaith is not None else spawn.default_dunscaith()
        self._grace = grace_seconds
        self._wait = terminate_wait_seconds
        self._checkpoint = checkpoint or (lambda _name: None)
        self._terminate_in_process = terminate
        self._specs: dict[ObjectId, StoredSpec] = {}
        self._final: dict[ObjectId, ObjectView] = {}  # an ended view never changes again
        self._owners: dict[int, str] = {}
        self._children: list[subprocess.Popen[bytes]] = []
        self._watched: dict[ObjectId, threading.Event] = {}  # object -> set once its owner is gone
        self._reported: set[ObjectId] = set()  # ends wait_for_change has already announced
        self._changed = threading.Event()  # set by any watcher

    # ------------------------------------------------------------------ create

    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        return needs_refusal(resources, options)

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        problem = _refusal(spec) or needs_refusal(spec.resources, spec.options)
        if problem:
            return CreateAnswer(CreateOutcome.REFUSED, None, problem)
        object_id = new_object_id(spec.name, datetime.now(UTC))
        directory = self.base / object_id
        try:
            os.mkdir(directory, 0o700)
        except OSError as exc:
            return CreateAnswer(CreateOutcome.REFUSED, None, f"cannot make {directory}: {exc.strerror}")
        try:
            publish(directory, ENV, encode_env({**os.environ, **spec.env}, _limits(spec.resources, spec.signal_before)))
            if spec.script is not None:
                publish(directory, SCRIPT, spec.script.encode(), mode=0o700)
            stored = StoredSpec(
                object_id=object_id,
                name=spec.name,
                nonce=spec.nonce,
                command=spec.command,
                script=spec.script is not None,
                workdir=os.path.abspath(spec.workdir or os.getcwd()),
                created_at=datetime.now(UTC).isoformat(),
            )
            publish(directory, OBJECT, stored.encode())  # from here on the object exists
            sync_dir(self.base)
        except OSError as exc:
            if os.path.lexists(directory / OBJECT):
                return CreateAnswer(CreateOutcome.UNKNOWN, None, f"{object_id} may exist: {exc}")
            return CreateAnswer(CreateOutcome.REFUSED, None, f"cannot write {directory}: {exc}")
        return CreateAnswer(CreateOutcome.CREATED, object_id)

    # ------------------------------------------------------------------ decisions before the start

    def release(self, object_id: ObjectId) -> None:
        directory = self._directory(object_id)
        self._reap()
        for _ in range(_CAS_ATTEMPTS):
            steps = self._steps(directory)
            if steps.phase is Phase.CANCELLED:
                raise SchedulerError(f"{object_id} was cancelled; it will never start")
            if steps.phase is Phase.STARTED:
                return
            lock = FlockLock(directory / LAUNCH_LOCK)
            if not _acquire(lock):
                if steps.phase is Phase.PENDING:
                    return  # its releaser is alive and starting it
                continue  # a concurrent release: read again
            try:
                if self._release_locked(object_id, directory, lock):
                    return
            finally:
                lock.release()
        raise SchedulerError(f"{object_id}: too many concurrent decisions; try again")

    def _release_locked(self, object_id: ObjectId, directory: Path, lock: FlockLock) -> bool:
        """True when the release is settled (started, or overtaken by a hold or cancel)."""
        steps = self._steps(directory)
        if steps.phase is Phase.HELD:
            if not try_append(directory, steps, Action.RELEASE):
                return False  # a cancel came first: read again
            self._checkpoint("released")
            steps = self._steps(directory)
            if steps.phase is not Phase.PENDING:
                return True  # a hold or cancel came right after this release: it stands
        elif steps.phase is not Phase.PENDING:
            return False
        if not try_append(directory, steps, Action.START):
            return True  # a hold or cancel overtook this release: it stands
        self._checkpoint("start-decided")
        spec = self._spec(object_id, directory)
        try:
            self._children.append(spawn.spawn_owner(self._dunscaith, spec, directory, lock.fd))
        except OSError as exc:
            raise SchedulerError(f"{object_id}: cannot start the process owner ({exc}); nothing ran") from None
        self._checkpoint("spawned")
        return True

    def hold(self, object_id: ObjectId) -> None:
        phase = self._decide(object_id, self._directory(object_id), Action.HOLD, _HELD_OR_AFTER)
        if phase is Phase.CANCELLED:
            raise SchedulerError(f"{object_id} was cancelled")
        if phase is Phase.STARTED:
            raise SchedulerError(f"{object_id} has started; a started local object cannot be held")

    def _decide(self, object_id: ObjectId, directory: Path, action: Action, settled: Container[Phase]) -> Phase | None:
        """``action`` appended to the object's steps unless they are in a ``settled`` phase, read again each
        time another actor's decision came first: the phase that settled it, None once ``action`` is in."""
        for _ in range(_CAS_ATTEMPTS):
            steps = self._steps(directory)
            if steps.phase in settled:
                return steps.phase
            if try_append(directory, steps, action):
                return None
        raise SchedulerError(f"{object_id}: too many concurrent decisions; try again")

    def requeue(self, object_id: ObjectId) -> None:
        self._directory(object_id)
        raise SchedulerError(
            f"{object_id}: the local scheduler cannot requeue; an object runs once, so make a new object"
        )

    # ------------------------------------------------------------------ cancel

    def cancel(self, object_id: ObjectId) -> None:
        directory = self._directory(object_id)
        if self._decide(object_id, directory, Action.CANCEL, _CANCELLED_OR_STARTED) is Phase.STARTED:
            self._terminate(object_id, directory)

    def _terminate(self, object_id: ObjectId, directory: Path) -> None:
        view, reading = self._read(object_id, directory)
        if view.state in ENDED:
            return
        nonce = reading.records.instance.nonce if reading and reading.records.instance else None
        try:
            if self._terminate_in_process is not None:
                answer = self._terminate_in_process(directory / INSTANCE_DIR, nonce, self._grace, self._wait)
            else:
                answer = spawn.terminate(
                    self._dunscaith, directory / INSTANCE_DIR, nonce=nonce, grace=self._grace, wait=self._wait
                )
        except (OSError, subprocess.SubprocessError) as exc:
            raise SchedulerError(f"{object_id}: cannot ask its process owner to terminate ({exc})") from None
        if answer.code == 0:
            return
        view, reading = self._read(object_id, directory)
        if view.state in ENDED:
            return
        if reading is not None and reading.records.terminated is not None:
            return  # another request (an emergency stop, say) is already ending it
        if reading is not None and reading.records.blocked is not None and reading.records.blocked.file == OUTCOME:
            return  # its worker has ended: only its outcome waits for space, and nothing is left to stop
        raise SchedulerError(
            f"{object_id}: the process owner did not confirm the cancel ({answer.word or answer.code})"
        )

    # ------------------------------------------------------------------ query

    @property
    def user(self) -> str:
        """The owner of the objects' folder: the user whose objects these are."""
        return self._owner(self.base)

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        """One listing of the objects' folder. ``confirm_absent`` changes nothing: an object stays in
        its folder after it ends, so absence here is already the whole answer."""
        self._reap()
        wanted = {name_digest(n) for n in names}
        names_set = set(names)
        try:
            entries = sorted(os.listdir(self.base))
        except OSError as exc:
            return QueryResult((), complete=False, detail=f"cannot read {self.base}: {exc.strerror}")
        found: list[ObjectView] = []
        problems: list[str] = []
        for entry in entries:
            if not is_object_id(entry) or entry[:8] not in wanted:
                continue
            object_id = ObjectId(entry)
            try:
                view = self.view(object_id)
            except _NotYetMade:
                continue
            except (DecodeError, OSError, SchedulerError) as exc:
                problems.append(f"{object_id}: {exc}")
                continue
            if view.name in names_set:
                found.append(view)
        return QueryResult(tuple(found), complete=not problems, detail="; ".join(problems))

    def view(self, object_id: ObjectId) -> ObjectView:
        """One object's view (raises DecodeError, OSError, or _NotYetMade for a create in progress)."""
        return self._read(object_id, self.base / object_id)[0]

    def _read(self, object_id: ObjectId, directory: Path) -> tuple[ObjectView, InstanceReading | None]:
        final = self._final.get(object_id)
        if final is not None:
            return final, None
        spec = self._spec(object_id, directory)
        owner = self._owner(directory)
        view, reading = self._observe(spec, owner, directory)
        if view.state is ObjectState.BOOT_FAIL:
            # Final, and a new attempt follows it: only if the launch lock was probed after the start was
            # decided. A release in another process that took the lock, decided the start and spawned the
            # owner between the probe and the steps' reading reads the same way; probed again now, after
            # the start is known, the lock is held by the owner, or its end is in the instance.
            view, reading = self._observe(spec, owner, directory)
        if view.state is ObjectState.STOPPING and reading is not None:
            view = _stopped_early(view, reading)
        if view.state in ENDED and view.signal is not None:
            view = _limit_reached(view, directory)
        if view.state in ENDED:
            self._final[object_id] = view
        return view, reading

    def _observe(self, spec: StoredSpec, owner: str, directory: Path) -> tuple[ObjectView, InstanceReading | None]:
        launch_live = is_held(directory / LAUNCH_LOCK)  # before the steps and the instance: see views.py
        steps = self._steps(directory)
        reading = read_instance(directory / INSTANCE_DIR) if steps.phase is Phase.STARTED else None
        return view_of(spec, owner, steps.phase, launch_live, reading), reading

    # ------------------------------------------------------------------ stops

    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        result = self.query([name], confirm_absent=False)
        stopped: list[ObjectId] = []
        failed: list[str] = []
        for view in result.objects:
            if view.state in ENDED or view.owner != self.user:
                continue
            try:
                self.cancel(view.object_id)
                stopped.append(view.object_id)
            except SchedulerError as exc:
                failed.append(str(exc))
        if failed or not result.complete:
            done = ", ".join(stopped) or "nothing"
            raise SchedulerError(
                f"emergency stop of {name}: stopped {done}; not stopped: {'; '.join(failed or [result.detail])}"
            )
        return stopped

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        stopped: list[ObjectId] = []
        failed: list[str] = []
        for object_id in dict.fromkeys(object_ids):
            try:
                if self._cancel_not_started(object_id):
                    stopped.append(object_id)
            except SchedulerError as exc:
                failed.append(str(exc))
        if failed:
            raise SchedulerError(
                f"stopped {', '.join(stopped) or 'nothing'}; not stopped: {'; '.join(failed)}")
        return stopped

    def _cancel_not_started(self, object_id: ObjectId) -> bool:
        if not is_object_id(object_id) or not os.path.lexists(self.base / object_id / OBJECT):
            return False  # nothing of ours to stop
        directory = self.base / object_id
        if self._owner(directory) != self.user:
            return False  # another user's: never touched
        # stopped already, or started meanwhile: left alone
        return self._decide(object_id, directory, Action.CANCEL, _CANCELLED_OR_STARTED) is None

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        """True once the process owner of one of ``object_ids`` is gone (so its outcome is recorded),
        each end announced once; False after ``timeout``."""
        watching = [oid for oid in dict.fromkeys(object_ids) if oid not in self._reported and is_object_id(oid)]
        for oid in watching:
            if oid not in self._watched:
                self._watch(oid)
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            ended = [oid for oid in watching if self._watched[oid].is_set()]
            if ended:
                self._reported.update(ended)
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._changed.clear()
            if any(self._watched[oid].is_set() for oid in watching):
                continue  # set between the check and the clear
            self._changed.wait(left)

    def watch_changes(self, object_ids: Sequence[ObjectId], changed: Callable[[], None]) -> ObjectsWatch | None:
        """inotify on each object's folder and instance directory, and a pidfd on its worker (``watch.py``);
        None where inotify cannot be had (the caller waits on ``wait_for_change`` and its poll)."""
        folders = [self.base / oid for oid in dict.fromkeys(object_ids) if is_object_id(oid)]
        return watch_objects(folders, changed)

    def _watch(self, object_id: ObjectId) -> None:
        done = threading.Event()
        self._watched[object_id] = done
        path = self.base / object_id / LAUNCH_LOCK

        def wait_for_owner() -> None:
            try:
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                fd = -1  # no lock file: no owner to wait for
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH)  # granted once no one holds it exclusively
                except OSError:
                    pass
                finally:
                    os.close(fd)  # dropped at once: a probe's instant, as is_held's
            done.set()
            self._changed.set()

        threading.Thread(target=wait_for_owner, name=f"owner-of-{object_id}", daemon=True).start()

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        """From the object's own files: made (``object.json``'s ``created_at``), started (the instance's
        ``instance.json``, written as the worker starts), ended (its outcome, or its failure to start; the
        ``cancel`` step for one cancelled before it started, which has no start)."""
        found: dict[ObjectId, ObjectTimes] = {}
        for object_id in dict.fromkeys(object_ids):
            if not is_object_id(object_id) or not os.path.lexists(self.base / object_id / OBJECT):
                continue
            try:
                found[object_id] = self._times(object_id, self.base / object_id)
            except _NotYetMade:
                continue
            except (DecodeError, OSError, ValueError) as exc:
                raise SchedulerError(f"{object_id}: its times do not read: {exc}") from None
        return found

    def _times(self, object_id: ObjectId, directory: Path) -> ObjectTimes:
        submitted = datetime.fromisoformat(self._spec(object_id, directory).created_at)
        steps = self._steps(directory)
        if steps.phase is Phase.CANCELLED:
            return ObjectTimes(submitted, None, step_at(directory, steps.count), "local")
        if steps.phase is not Phase.STARTED:
            return ObjectTimes(submitted, None, None, "local")
        records = read_instance(directory / INSTANCE_DIR).records
        started = records.instance.at if records.instance is not None else None
        ended = (records.outcome.at if records.outcome is not None
                 else records.failure.at if records.failure is not None else None)
        return ObjectTimes(submitted, started, ended, "local")

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        """The object folder's ``stdout`` and ``stderr``, where its process owner and worker write."""
        if not is_object_id(object_id) or not os.path.lexists(self.base / object_id / OBJECT):
            return None
        directory = self.base / object_id
        return OutputPaths(stdout=str(directory / STDOUT), stderr=str(directory / STDERR))

    # ------------------------------------------------------------------ internals

    def _directory(self, object_id: ObjectId) -> Path:
        if not is_object_id(object_id):
            raise SchedulerError(f"{object_id!r} is not an object of the local scheduler")
        directory = self.base / object_id
        if not os.path.lexists(directory / OBJECT):
            raise SchedulerError(f"no object {object_id} in {self.base}")
        return directory

    def _spec(self, object_id: ObjectId, directory: Path) -> StoredSpec:
        spec = self._specs.get(object_id)
        if spec is None:
            try:
                data = read_private(directory / OBJECT, MAX_OBJECT_FILE)
            except FileNotFoundError:
                raise _NotYetMade(object_id) from None
            spec = decode_spec(data, directory)
            self._specs[object_id] = spec
        return spec

    def _steps(self, directory: Path) -> Steps:
        try:
            return read_steps(directory, os.listdir(directory))
        except (DecodeError, OSError) as exc:
            raise SchedulerError(f"{directory.name}: cannot read its steps: {exc}") from None

    def _owner(self, directory: Path) -> str:
        uid = os.stat(directory, follow_symlinks=False).st_uid
        if uid not in self._owners:
            try:
                self._owners[uid] = pwd.getpwuid(uid).pw_name
            except KeyError:
                self._owners[uid] = str(uid)
        return self._owners[uid]

    def _reap(self) -> None:
        """Collect process owners that ended, so a long-lived supervisor leaves no zombies."""
        self._children = [child for child in self._children if child.poll() is None]


Terminate = Callable[[Path, str | None, float, float], spawn.TerminateAnswer]
"""(instance directory, nonce, grace, wait) -> the wrapper's answer, as ``remote terminate`` gives it."""

STOPPED_EARLY = "terminated on request; its processes have ended (its outcome is written after the grace)"


def _stopped_early(view: ObjectView, reading: InstanceReading) -> ObjectView:
    """A terminating object whose worker's processes are all gone is stopped, though its wrapper writes
    the outcome only once the grace has run out (``group.py``)."""
    records = reading.records
    if records.terminated is None or records.instance is None:
        return view
    end = group_ended(records.instance.process_group, records.instance.worker_pid)
    if end is None:
        return view
    if end.signal == signal.SIGKILL and records.killed is None:
        return view  # the grace's KILL, its killed.json a moment away (its creation wakes the supervisor)
    killed = records.killed is not None and end.signal in (signal.SIGKILL, None)
    return replace(view, state=ObjectState.CANCELLED, exit_code=end.exit_code,
                   signal=signal.SIGKILL if killed else end.signal,
                   reason="killed after the grace" if killed else STOPPED_EARLY)


class _NotYetMade(Exception):
    """An object directory without its spec: a create in progress, or one that died before its spec."""


def _acquire(lock: FlockLock) -> bool:
    deadline = time.monotonic() + _PROBE_PATIENCE
    while True:
        try:
            lock.acquire()
            return True
        except LockHeld:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


# What one machine enforces without a resource manager (docs/local-scheduler.md): cpus as the job's
# CPU affinity, memory as its address-space limit, the time limit by a watchdog in its process group.
_HONOURED = frozenset({Need.CPUS, Need.MEMORY, Need.TIME_LIMIT})
_WHY = {Need.GPUS: "gpus are not handed out here", Need.QUEUE: "there is one queue, this machine",
        Need.ACCOUNT: "nothing is charged here", Need.QOS: "there is no quality of service here",
        Need.EXPORT: "the job has your environment and the --env pairs"}


def needs_refusal(resources: Resources, options: Sequence[str]) -> str | None:
    """One line naming the first need the local scheduler cannot honour, or None."""
    for need in resources.asked():
        if need not in _HONOURED:
            return (f"the local scheduler cannot honour {SUBMIT_FLAG[need]} ({need}: {_WHY[need]}); it honours "
                    "cpus, memory and a time limit; or use --cluster with a cluster whose scheduler can")
    if resources.cpus is not None:
        usable = len(os.sched_getaffinity(0))
        if resources.cpus > usable:
            return f"the local scheduler cannot give {resources.cpus} cpus: this process may use {usable}"
    if options:
        return (f"the local scheduler takes no scheduler options (given: {' '.join(options)}); it honours "
                "cpus, memory and a time limit")
    return None


def _limits(resources: Resources, signal_before: SignalBefore | None = None) -> dict[str, int | str]:
    asked: dict[str, int | str | None] = {"cpus": resources.cpus, "memory_mb": resources.memory_mb,
                                          "time_limit_s": resources.time_limit_s}
    if signal_before is not None:  # the watchdog sends it this long before the time limit (exec_shim.py)
        asked.update(signal=str(signal_before.signal), signal_s=signal_before.seconds)
    return {name: value for name, value in asked.items() if value is not None}


def _limit_reached(view: ObjectView, directory: Path) -> ObjectView:
    """An object a signal ended, as its watchdog (exec_shim.py) says it: out of memory or past its time
    limit when the watchdog left its mark; else as it is."""
    try:
        with open(directory / OOM_MARK, "rb") as handle:
            mark = handle.read(64).split()
    except FileNotFoundError:
        mark = None
    except OSError:
        mark = []
    if mark is not None:
        shown = len(mark) == 2 and all(k.isdigit() for k in mark)
        used = f" ({int(mark[0]) // 1024}M resident, its limit {int(mark[1]) // 1024}M)" if shown else ""
        return replace(view, state=ObjectState.OUT_OF_MEMORY,
                       reason=f"its memory limit was passed{used}: killed (SIGKILL)")
    if os.path.lexists(directory / TIME_LIMIT_MARK):
        return replace(view, state=ObjectState.TIMEOUT, reason="its time limit was reached (SIGTERM, then "
                       "SIGKILL after 10 s)")
    return view


def _refusal(spec: ObjectSpec) -> str:
    if not spec.name:
        return "an object needs the job's name"
    if not spec.nonce:
        return "an object needs its attempt's nonce"
    if bool(spec.command) == (spec.script is not None):
        return "an object runs either a command or a script, not both and not neither"
    if spec.workdir is not None and not os.path.isdir(spec.workdir):
        return f"the working directory {spec.workdir} does not exist"
    return ""
