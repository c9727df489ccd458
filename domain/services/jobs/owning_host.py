"""Where a job command runs: here, or on the host that owns the job (seed 000: routing is the one thing a
pointer decides: the owning host's name and the dunscaith path there).

Two ways a job is another host's: its pointer names another host's record root (a host's own store), or
its record, read here from a store every login node shares, binds its objects to another host (a
local-scheduler job). Either way the command re-runs itself there; this use case only says where.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dunscaith.domain.model.jobs.binding import bound_elsewhere
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.kinds import Capabilities, declared_nothing
from dunscaith.domain.model.jobs.pointer import Pointer, PointerError
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.state import JobState
from dunscaith.ports.pointers import Pointers


@dataclass(frozen=True, slots=True)
class Owner:
    host: str
    binary: str | None  # dunscaith's path there; None: where it is here (a shared install)


class OwningHost:
    def __init__(self, pointers: Pointers, here: HostIdentity, shared_location: Callable[[], str | None],
                 root_host: Callable[[str], HostIdentity | None] | None = None,
                 capabilities: Capabilities = declared_nothing) -> None:
        self._pointers = pointers
        self._capabilities = capabilities  # a job's adapter -> what its scheduler kind declares (host-bound)
        self._here = here
        self._root_host = root_host  # the host a record root's HOST file binds it to (None: none that reads)
        # where the records are when the store is one every login node shares, else None; asked only when
        # a pointer names another host (a host's own store is never opened just to ask)
        self._shared_location = shared_location

    def of_pointer(self, job: JobId) -> Owner | None:
        """The host ``job``'s pointer names, when it is not this one and its records are not the shared
        store this command opens; None when the record here decides (no pointer, or a damaged one)."""
        try:
            pointer = self._pointers.read(job)
        except PointerError:  # no pointer or an unreadable one: the record here decides
            return None
        if pointer.root_host == self._here:
            return None
        # a pointer naming the shared store this command opens points here, whichever host wrote it
        if pointer.record_root == self._shared_location():
            return None
        return Owner(pointer.host, pointer.binary)

    def of_sweep(self, sweep: JobId) -> tuple[Owner, JobId] | None:
        """The host a sweep's elements' pointers name (``NAME-<index>``), when nothing of that name is
        recorded here: a sweep has no pointer of its own, its elements do (each an ordinary job). The index
        of pointers not settled is read first (a sweep still going), then every pointer (one finished).
        The owner and the element whose pointer said so; None when no element's pointer names another host."""
        prefix = f"{sweep}-"

        def element(name: str) -> bool:
            return name.startswith(prefix) and name[len(prefix):].isdigit()

        return self._first_named(element)

    def of_pipeline(self, name: JobId) -> tuple[Owner, JobId] | None:
        """The host a pipeline's jobs' pointers name (``NAME.STEP``, ``NAME.STEP-<index>``), when nothing of
        that name is recorded here: a pipeline has no pointer of its own, its steps' jobs do. Read as
        ``of_sweep`` reads a sweep's (the index of pointers not settled first, then every pointer). Only a
        guess from the names: the host it names decides by its records whether ``name`` is a pipeline."""
        prefix = f"{name}."

        def member(job: str) -> bool:
            rest = job[len(prefix):]
            return job.startswith(prefix) and bool(rest) and "." not in rest  # a step's name has no '.'

        return self._first_named(member)

    def _first_named(self, wanted: Callable[[str], bool]) -> tuple[Owner, JobId] | None:
        """The first job ``wanted`` takes whose pointer names another host, and that host: the index of
        pointers not settled is read first, every pointer only when it holds none of them."""
        indexed = self._pointers.indexed() or []
        names = [job for job in indexed if wanted(job)]
        if not names:
            names = [r.job for r in self._pointers.all() if r.pointer is not None and wanted(r.job)]
        for job in names:
            owner = self.of_pointer(job)
            if owner is not None:
                return owner, job
        return None

    def earlier_root(self, job: JobId) -> Pointer | None:
        """``job``'s pointer when it names a record root of this host whose HOST file still binds it here
        (records.root may have changed since the job was recorded there); None otherwise."""
        try:
            pointer = self._pointers.read(job)
        except PointerError:
            return None
        if pointer.root_host != self._here or self._root_host is None:
            return None
        return pointer if self._root_host(pointer.record_root) == self._here else None

    def of_record(self, state: JobState) -> Owner | None:
        """The host whose processes are the job's objects (a local-scheduler job in a shared store), when
        it is not this one; None when this host may act on the job."""
        if bound_elsewhere(state, self._here, self._capabilities(state.spec.adapter).host_bound) is None:
            return None
        try:
            pointer = self._pointers.read(state.name)
        except PointerError:  # the binary there is then taken to be where it is here (a shared install)
            return Owner(state.host, None)
        return Owner(state.host, pointer.binary if pointer.host == state.host else None)
