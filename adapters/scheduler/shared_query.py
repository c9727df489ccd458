"""All supervisors on one host share one query per poll interval (peers §2.3: per-job polling floods).

``SharedQueryScheduler`` wraps any scheduler (Slurm's, the local one, a fake): every call but a
confirming ``query`` goes straight through. The shared state is a private directory inside the
record root (one per cluster):

- ``wanted/<token>``: the names each live supervisor asks about (pid + names), refreshed as it polls;
- ``answer.json``: the last answer (objects, complete, detail) with the names it covers and the
  wall-clock time it was asked, published whole (staging name, then rename; unsynced: a cache), by an
  asker that found another live supervisor registered (alone, nobody would read it: a supervisor, or a
  ``status``, that comes registers, finds no fresh answer, asks for itself and everyone, and publishes;
  a sweep's 500 objects cost more to write than the rest of a poll);
- ``ask.lock``: the flock one process holds while it asks.

A query first reads ``answer.json``: fresh enough (asked within ``max_age``), asked after this
instance's last action and after the answer it used last (a caller never gets the same answer
twice: each of its polls sees a newer squeue), and covering the caller's names, it is the answer.
Otherwise the caller takes the lock, reads again (someone may just have asked), and if still needed
asks the scheduler ONCE for its own names and every registered one, then publishes the answer.
Since supervisors wake on the same ticks (``domain.model.jobs.polling``), the first to wake asks for
all and the others read. A failed query is shared too (``complete=False``): a
struggling controller is not asked a hundred times more.

A sweep's array (``CreatesArrays``): ``SharedArrayQueryScheduler`` wraps a scheduler that makes arrays, and
passes its array calls through as it passes ``create_held`` (the create is an action: the next query asks
afresh); ``sharing`` picks the class the inner scheduler needs, so an instance is ``CreatesArrays`` exactly
when what it wraps is. An element's query is one more name (``NAME-<index>``) like any other.

Only queries that confirm absence (the supervisors' polls) are shared. One that does not (a sweep's,
an emergency stop's) is a one-off that acts on what it sees: it goes straight to the scheduler and its
names are not registered, so a sweep of a thousand residual names never joins every later poll.
After this instance acts on the scheduler (creates, releases, cancels...) its next query asks afresh:
an answer asked before its own action says nothing about what the action did. Every answer carries
the time it was asked (``QueryResult.asked_at``), so the supervisor can check the same rule itself.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from dunscaith.adapters.durable.liveness import pid_alive
from dunscaith.adapters.durable.lock import FlockLock
from dunscaith.adapters.durable.private_dir import check_record_folder, ensure_record_folder
from dunscaith.adapters.durable.private_read import read_private_stat
from dunscaith.adapters.durable.publish import replace_cached
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import (
    CreateAnswer,
    ObjectSpec,
    ObjectState,
    ObjectTimes,
    ObjectView,
    OutputPaths,
    QueryResult,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.strict_json import DecodeError, check_fields, decode_exact, dumps_canonical
from dunscaith.ports.clock import Clock
from dunscaith.ports.scheduler import CreatesArrays, Scheduler

if TYPE_CHECKING:
    from dunscaith.adapters.scheduler.opening import Opening

ANSWER = "answer.json"
LOCK = "ask.lock"
WANTED = "wanted"

_ANSWER_FIELDS = {
    "version": (int,), "asked_at": (float, int), "names": (list,), "complete": (bool,), "detail": (str,),
    "objects": (list,),
}
_OBJECT_FIELDS = {
    "object_id": (str,), "name": (str,), "nonce": (str, type(None)), "state": (str,), "owner": (str,),
    "exit_code": (int, type(None)), "signal": (int, type(None)), "reason": (str,), "started": (bool,),
}
_MAX_SHARED_FILE = 16 * 1024 * 1024
_WANTED_FIELDS = {"version": (int,), "pid": (int,), "names": (list,)}

A = TypeVar("A")
T = TypeVar("T")


class SharedQueryScheduler:
    """A scheduler whose confirming ``query`` is shared by every instance using the same ``directory``."""

    def __init__(
        self,
        inner: Scheduler,
        directory: Path,
        clock: Clock,
        *,
        max_age: float = 4.0,
        registration_ttl: float = 900.0,
        record_root: Path | None = None,
    ) -> None:
        """``record_root``: the root ``directory`` lies under, named when a folder of it is refused."""
        self.inner = inner
        self.directory = directory
        self._root = record_root or directory
        # checked now, before a job is recorded: an open folder refuses the command, never a query mid-run;
        # made only when first used, so stop --emergency on a host with no records leaves none (seed 000)
        check_record_folder(directory / WANTED, self._root)
        self._clock = clock
        self._max_age = max_age
        self._ttl = registration_ttl
        self._token = f"{os.getpid()}-{secrets.token_hex(6)}"
        self._registered: frozenset[str] = frozenset()
        self._registered_at = 0.0
        self._acted = False  # this instance acted since it last asked: its next query asks afresh
        self._acted_at = float("-inf")  # when its last action returned: an older answer is never used
        self._seen_at = float("-inf")  # when the answer it used last was asked: only newer ones are used
        self.asked = 0  # how many times this instance asked the scheduler itself (for benchmarks)
        # Per poll the files cost more CPU than anything but the scheduler's own client, so what this
        # instance already knows is not worked out again: its folders once checked (again after any
        # failure), the answer it last read or wrote while that very file is in place, and each other
        # supervisor's registration while its file is unchanged.
        self._folders_ready = False
        self._answer_seen: tuple[tuple[int, ...], tuple[float, frozenset[str], QueryResult]] | None = None
        self._others: dict[str, tuple[tuple[int, ...], int, frozenset[str]]] = {}

    # ---- everything but a confirming query goes straight through ---------------------------------
    @property
    def user(self) -> str:
        return self.inner.user

    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        return self.inner.refusal(resources, options)

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        return self._act(self.inner.create_held, spec)

    def release(self, object_id: ObjectId) -> None:
        self._act(self.inner.release, object_id)

    def hold(self, object_id: ObjectId) -> None:
        self._act(self.inner.hold, object_id)

    def requeue(self, object_id: ObjectId) -> None:
        self._act(self.inner.requeue, object_id)

    def cancel(self, object_id: ObjectId) -> None:
        self._act(self.inner.cancel, object_id)

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        return self._act(self.inner.cancel_if_not_started, object_ids)

    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        return self._act(self.inner.stop_by_name, name)

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        return self.inner.output_paths(object_id)

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        return self.inner.times(object_ids)

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        return self.inner.wait_for_change(object_ids, timeout)

    def _act(self, action: Callable[[A], T], argument: A) -> T:
        """Run an action; whatever it did (even when it raised), this instance's next query asks afresh."""
        try:
            return action(argument)
        finally:
            self._acted = True
            # an answer asked before the action returned may not show it
            self._acted_at = self._clock.now().timestamp()

    # ---- the shared query ---------------------------------------------------------------------------
    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        if not confirm_absent:
            return self.inner.query(names, confirm_absent=False)
        wanted = frozenset(names)
        if not wanted:
            return QueryResult((), True)
        try:
            return self._shared_query(wanted)
        except OSError:
            self._folders_ready = False  # a folder removed or changed under it: checked again next time
            raise

    def _shared_query(self, wanted: frozenset[str]) -> QueryResult:
        self._register(wanted)
        answer = None if self._acted else self._fresh_answer(wanted)
        if answer is not None:
            return answer
        lock = FlockLock(self.directory / LOCK)
        lock.acquire(blocking=True)
        try:
            # whoever held the lock may have asked for us (but not after our own action)
            answer = None if self._acted else self._fresh_answer(wanted)
            if answer is not None:
                return answer
            everyone = sorted(wanted | self._registered_names())
            asked_at = self._clock.now().timestamp()
            self._acted = False
            result = self.inner.query([JobId(n) for n in everyone], confirm_absent=True)
            self.asked += 1
            if self._others:  # alone, nobody reads it: one who comes asks for itself, and publishes for both
                self._publish(asked_at, everyone, result)
        finally:
            lock.release()
        self._seen_at = asked_at
        return _only(result, wanted, asked_at)

    def close(self) -> None:
        """Stop asking for this instance's names (a supervisor that ends calls this)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.directory / WANTED / self._token)

    # ---- files --------------------------------------------------------------------------------------
    def _fresh_answer(self, wanted: frozenset[str]) -> QueryResult | None:
        stored = self._read_answer()
        if stored is None:
            return None
        asked_at, names, result = stored
        age = self._clock.now().timestamp() - asked_at
        if not -1.0 <= age <= self._max_age or not wanted <= names:
            return None
        if asked_at < self._acted_at or asked_at <= self._seen_at:
            return None  # asked before this instance's last action, or already used: ask afresh
        self._seen_at = asked_at
        return _only(result, wanted, asked_at)

    def _read_answer(self) -> tuple[float, frozenset[str], QueryResult] | None:
        path = self.directory / ANSWER
        try:
            seen = self._answer_seen
            # The file this instance last read or wrote, still in place, still says what it said then. (A
            # new file that happened to get a freed inode with the same size and times would pass for an
            # old one, and an old answer is never fresh for the caller that saw it: one more query, never
            # a wrong one.)
            if seen is not None and _identity(os.stat(path, follow_symlinks=False)) == seen[0]:
                return seen[1]
            data, st = read_private_stat(path, _MAX_SHARED_FILE)
            obj = decode_exact(data, _ANSWER_FIELDS, "shared query answer")
            if obj["version"] != 1:
                return None
            views = tuple(_view(o) for o in obj["objects"])
            result = QueryResult(views, obj["complete"], obj["detail"])
            read = float(obj["asked_at"]), frozenset(str(n) for n in obj["names"]), result
            self._answer_seen = (_identity(st), read)
            return read
        except (OSError, DecodeError, ValueError, TypeError):
            return None  # missing or damaged: ask again, and the next publish replaces it whole

    def _publish(self, asked_at: float, names: Sequence[str], result: QueryResult) -> None:
        data = {
            "version": 1, "asked_at": asked_at, "names": list(names), "complete": result.complete,
            "detail": result.detail, "objects": [_view_dict(v) for v in result.objects],
        }
        # A cache of squeue's answer, not a record: lost or torn by a power loss it reads as absent (or
        # older than max_age, since a reboot takes longer), which costs one more squeue. No fsync. The
        # old answer is unlinked first: ext4 flushes a file renamed over another at once (auto_da_alloc),
        # which costs more CPU than the rest of the publish; a reader that finds no answer meanwhile
        # waits for this lock, and reads the new one.
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.directory / ANSWER)
        replace_cached(self.directory, ANSWER, dumps_canonical(data))
        with contextlib.suppress(OSError):
            self._answer_seen = (_identity(os.stat(self.directory / ANSWER, follow_symlinks=False)),
                                 (asked_at, frozenset(names), result))

    def _register(self, names: frozenset[str]) -> None:
        now = time.time()
        folder = self.directory / WANTED
        if not self._folders_ready:
            ensure_record_folder(folder, self._root)  # the shared directory too, on the way down
            self._folders_ready = True
        if names == self._registered and now - self._registered_at < self._ttl / 4:
            return
        if names == self._registered:
            with contextlib.suppress(FileNotFoundError):
                os.utime(folder / self._token)
                self._registered_at = now
                return
        # no fsync: after a power loss the supervisor that wrote it is gone too (a new one registers anew)
        data = dumps_canonical({"version": 1, "pid": os.getpid(), "names": sorted(names)})
        replace_cached(folder, self._token, data)
        self._registered, self._registered_at = names, now

    def _registered_names(self) -> set[str]:
        """Every live supervisor's names: this instance's own as it registered them, the others' read
        from their files (each decoded again only when its file changed; its process checked each time)."""
        folder = self.directory / WANTED
        names: set[str] = set(self._registered)
        now = time.time()
        try:
            entries = os.listdir(folder)
        except FileNotFoundError:
            return names
        known, self._others = self._others, {}
        for entry in entries:
            if entry.startswith(".") or entry == self._token:
                continue
            path = folder / entry
            try:
                st = os.lstat(path)
                if now - st.st_mtime > self._ttl:
                    os.unlink(path)  # a supervisor that stopped polling long ago
                    continue
                cached = known.get(entry)
                if cached is not None and cached[0] == _identity(st):
                    _, pid, theirs = cached
                else:
                    data, opened = read_private_stat(path, _MAX_SHARED_FILE)
                    obj = decode_exact(data, _WANTED_FIELDS, "query registration")
                    pid, theirs = obj["pid"], frozenset(str(n) for n in obj["names"])
                    if not isinstance(pid, int):
                        continue
                    cached = (_identity(opened), pid, theirs)
                if not pid_alive(pid):
                    os.unlink(path)
                    continue
                self._others[entry] = cached
                names.update(theirs)
            except (OSError, DecodeError):
                continue
        return names


class SharedArrayQueryScheduler(SharedQueryScheduler):
    """A ``SharedQueryScheduler`` over a scheduler that makes a sweep's objects as one array: the array calls
    go straight through (the create as an action)."""

    def __init__(self, inner: Scheduler, directory: Path, clock: Clock, **options: Any) -> None:
        if not isinstance(inner, CreatesArrays):
            raise TypeError(f"{type(inner).__name__} makes no arrays")
        super().__init__(inner, directory, clock, **options)
        self._arrays = inner

    def array_refusal(self, count: int, largest_index: int, scripts: Sequence[str | None] = ()) -> str | None:
        return self._arrays.array_refusal(count, largest_index, scripts)

    def create_array_held(self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]],
                          max_running: int | None) -> CreateAnswer:
        return self._act(lambda _: self._arrays.create_array_held(sweep, elements, max_running), None)

    def task_object(self, array_id: ObjectId, index: int) -> ObjectId:
        return self._arrays.task_object(array_id, index)


def sharing(inner: Scheduler, directory: Path, clock: Clock, *, max_age: float = 4.0,
            registration_ttl: float = 900.0, record_root: Path | None = None) -> SharedQueryScheduler:
    """``inner`` behind a shared query: a ``SharedArrayQueryScheduler`` when ``inner`` makes arrays."""
    kind = SharedArrayQueryScheduler if isinstance(inner, CreatesArrays) else SharedQueryScheduler
    return kind(inner, directory, clock, max_age=max_age, registration_ttl=registration_ttl, record_root=record_root)


@contextlib.contextmanager
def shared_on_this_host(inner: Scheduler, opening: Opening, folder: str, max_age: float) -> Iterator[Scheduler]:
    """A cluster's scheduler as a kind opens it when every supervisor of this host shares one query per
    tick through the host's scheduler state (``folder``/CLUSTER under ``scheduler_state.root``, by default
    records.root), closed with the command."""
    root = opening.state_root
    shared = sharing(inner, root / folder / opening.cluster, opening.clock(), max_age=max_age, record_root=root)
    try:
        yield shared
    finally:
        shared.close()


def _identity(st: os.stat_result) -> tuple[int, ...]:
    """What tells one version of a small file from another without reading it: a publish makes a new
    file (a new inode), an in-place write changes its size or times."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_mode)


def _only(result: QueryResult, names: frozenset[str], asked_at: float) -> QueryResult:
    return QueryResult(tuple(v for v in result.objects if v.name in names), result.complete, result.detail,
                       datetime.fromtimestamp(asked_at, UTC))


def _view_dict(v: ObjectView) -> dict[str, Any]:
    return {
        "object_id": v.object_id, "name": v.name, "nonce": v.nonce, "state": v.state.value, "owner": v.owner,
        "exit_code": v.exit_code, "signal": v.signal, "reason": v.reason, "started": v.started,
    }


def _view(obj: Any) -> ObjectView:
    if not isinstance(obj, dict):
        raise DecodeError("an object in the shared answer is not a JSON object")
    check_fields(obj, _OBJECT_FIELDS, "shared query object")
    return ObjectView(
        object_id=ObjectId(obj["object_id"]), name=JobId(obj["name"]),
        nonce=Nonce(obj["nonce"]) if obj["nonce"] is not None else None, state=ObjectState(obj["state"]),
        owner=obj["owner"], exit_code=obj["exit_code"], signal=obj["signal"], reason=obj["reason"],
        started=obj["started"],
    )
