"""A scheduler that makes, releases and reports objects (local processes, Slurm jobs, fakes).

The port is primitives only: the rules that combine them (which residual objects a sweep may stop,
what an emergency stop reports) live once in ``domain/``, in the use cases that call them.

No method here is ever retried by an adapter when it makes an object: ``create_held`` sends at most
one request, and when its answer is lost it says UNKNOWN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from dunscaith.domain.model.jobs.ids import JobId, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, ObjectSpec, ObjectTimes, OutputPaths, QueryResult
from dunscaith.domain.model.jobs.resources import Resources


class SchedulerError(Exception):
    """The scheduler refused or failed an action on an existing object; the message says which."""


class Scheduler(Protocol):
    @property
    def user(self) -> str:
        """Whom this scheduler acts as: an object another owner has is foreign to it."""
        ...

    def refusal(self, resources: Resources, options: Sequence[str]) -> str | None:
        """One line naming what of a job's needs or scheduler options this scheduler cannot honour, or None.

        Asked before a job is recorded (so bad input is refused, exit 2, with nothing recorded), and
        again by ``create_held`` before anything is sent (then a REFUSED answer). Sends no request: the
        scheduler's own rules only (Slurm: the sbatch options dunscaith owns; local: what one machine
        can enforce)."""
        ...

    def create_held(self, spec: ObjectSpec) -> CreateAnswer:
        """Create one object, held (not started until released). One request, never retried."""
        ...

    def release(self, object_id: ObjectId) -> None: ...

    def hold(self, object_id: ObjectId) -> None: ...

    def requeue(self, object_id: ObjectId) -> None: ...

    def cancel(self, object_id: ObjectId) -> None: ...

    def query(self, names: Sequence[JobId], *, confirm_absent: bool) -> QueryResult:
        """Every object carrying any of ``names``, in one request whatever the number of names.

        With ``confirm_absent`` a name that has no live object is also looked up where the scheduler
        remembers ended ones (Slurm: ``sacct``, when the cluster keeps accounting), so a supervisor
        learns how a purged object ended. Without it only live objects are asked for: enough for
        sweeps and stops, which act on live objects alone, and one request cheaper.
        """
        ...

    def cancel_if_not_started(self, object_ids: Sequence[ObjectId]) -> list[ObjectId]:
        """Cancel each of ``object_ids`` that is the user's own and not started (held or pending) as the
        scheduler sees it when it cancels, not as a query saw it earlier: one that started meanwhile,
        another user's, an ended one or an id the scheduler does not know is left as it is. "Not
        started" is the scheduler's word for now (to Slurm a requeued job pending again is pending);
        that an object never ran is the caller's rule, judged on a query first. What was stopped.

        Raises SchedulerError when the scheduler could not be asked or did not say (the message names
        anything it stopped all the same)."""
        ...

    def stop_by_name(self, name: JobId) -> list[ObjectId]:
        """Stop every object of the user's carrying ``name``, running ones too, with no store and no
        nonce check (the emergency stop). What was stopped."""
        ...

    def wait_for_change(self, object_ids: Sequence[ObjectId], timeout: float) -> bool:
        """Wait at most ``timeout`` seconds for one of ``object_ids`` (started objects) to change, its end
        at least: True as soon as one may have (the caller queries now), False when the time ran out.

        A scheduler that cannot tell (Slurm: nothing announces a job's end but a query) returns False
        at once, without waiting: the caller then sleeps until its next poll itself."""
        ...

    def output_paths(self, object_id: ObjectId) -> OutputPaths | None:
        """Where the object's stdout and stderr go, for display; None when the scheduler does not
        know the object (any more) or could not be asked."""
        ...

    def times(self, object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        """The scheduler's own submit, start and end times of each of ``object_ids`` it still knows, for
        display (``status``): an id it does not know (any more) is left out. Read-only, one request
        where the scheduler allows (Slurm: ``sacct`` where the cluster keeps accounting, else
        ``squeue``; local: the object's and its instance's files).

        Raises SchedulerError when the scheduler could not be asked."""
        ...


class ChangeWatch(Protocol):
    """A watch made by ``WatchesChanges.watch_changes``; closed by whoever made it."""

    def close(self) -> None: ...


@runtime_checkable
class WatchesChanges(Protocol):
    """A scheduler that can tell, as it happens, that one of its started objects changed (the local one:
    its instance directory and its process owner are on this machine). A scheduler without it (Slurm:
    nothing announces a job's end but a query) is polled, with ``Scheduler.wait_for_change`` between."""

    def watch_changes(self, object_ids: Sequence[ObjectId], changed: Callable[[], None]) -> ChangeWatch | None:
        """Call ``changed`` (from any thread, at once, costing nothing while nothing happens) whenever one
        of ``object_ids`` may have changed: started, asked to stop, ended, or its process gone; once right
        away as well, for a change made before the watch began. The caller queries then. None where this
        system gives no such watch (the caller polls). Until ``close``; never blocks."""
        ...


@runtime_checkable
class CreatesArrays(Protocol):
    """A scheduler that makes many held objects in one request (Slurm: a job array), for a sweep.

    Each element of the sweep stays a job of its own: its attempt's object is one task of the array,
    ``task_object(array_id, index)``, and a query for the element's name (``NAME-<index>``) answers with
    that task, named so and carrying the array's nonce, exactly as it answers for a job's own object."""

    def array_refusal(self, count: int, largest_index: int, scripts: Sequence[str | None] = ()) -> str | None:
        """Why ``count`` elements with indices up to ``largest_index`` cannot be one array here (above the
        cluster's MaxArraySize, arrays turned off; ``scripts``, the elements' batch scripts or None for a
        command, asking each of its own options), in one line, or None. May ask the scheduler once (Slurm:
        ``scontrol show config``); one that cannot be asked is a refusal too."""
        ...

    def create_array_held(self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]],
                          max_running: int | None) -> CreateAnswer:
        """One held array named ``sweep``: one task per (index, spec), the task's index the element's, each
        task running its own spec's command or script. Every spec carries the same nonce (the array's),
        and the same needs and options. ``max_running``: at most that many tasks run at once (Slurm: %N).
        One request, never retried. CREATED: ``object_id`` is the array's; REFUSED: nothing was made;
        UNKNOWN: the answer was lost and the tasks are found by their names and nonce."""
        ...

    def task_object(self, array_id: ObjectId, index: int) -> ObjectId:
        """The object id of the array's task ``index`` (Slurm: ``<array id>_<index>``)."""
        ...
