"""What this host keeps of its Grid Engine jobs that Grid Engine itself forgets (docs/gridengine.md "Ledger").

- the nonce of each job it made or saw: the ``-ac`` context is in ``qstat -j`` alone, gone once the job
  has left qstat, and never in accounting; so an ended job's view still carries its attempt's nonce;
- each job (or array task) ``qdel`` deleted before it started (``has deleted job N``, not ``registered ...
  for deletion``): such a job never gets an accounting record, and would otherwise be absent for ever.

One small JSON file per job, ``<name>~<id>~<submitted>.json`` (ids repeat after a qmaster restart: the
submission time tells two jobs of one id apart), written whole and renamed into place. A write that a kill
-9 prevents loses nothing Grid Engine still knows; a job deleted by hand, or whose delete was not recorded,
is absent, which the domain treats as unknown until its deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

_KEPT_DAYS = 60  # entries not written for this long are removed, now and then, as a new one is written
_PRUNE_EVERY = 0.01  # the chance that a new entry's write looks for old ones (a listing of the folder)


@dataclass(frozen=True, slots=True)
class Entry:
    object_id: str  # "12", or "12.3" for task 3 of array 12
    name: str  # the job's name (for a task: the element's, S-3)
    nonce: str | None
    submitted: int | None  # epoch seconds, as qstat -j prints JB_submission_time
    deleted: float | None = None  # when qdel deleted it before it started (epoch seconds); None: not so
    stdout: str | None = None
    stderr: str | None = None
    cwd: str | None = None


class Ledger:
    """The entries of one cluster, in ``directory`` (None: in this process's memory alone)."""

    def __init__(self, directory: Path | None) -> None:
        self._dir = directory
        self._memory: dict[str, Entry] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _file(entry: Entry) -> str:
        return f"{entry.name}~{entry.object_id}~{entry.submitted or 0}.json"

    def put(self, entry: Entry) -> None:
        """Add ``entry``, or complete the entry of the same job (another process's too) with what it adds."""
        key = self._file(entry)
        with self._lock:
            old = self._memory.get(key)
        if old is None and self._dir is not None:
            old = self._read(self._dir / key)
        merged = entry if old is None else replace(old, **{k: v for k, v in asdict(entry).items() if v is not None})
        with self._lock:
            self._memory[key] = merged
        if merged == old or self._dir is None:
            return
        with contextlib.suppress(OSError):  # the ledger helps; Grid Engine stays the truth
            self._dir.mkdir(parents=True, exist_ok=True)
            tmp = self._dir / f".{key}.{os.getpid()}.{threading.get_ident()}.tmp"
            tmp.write_text(json.dumps(asdict(merged)))
            tmp.replace(self._dir / key)
            if old is None and random.random() < _PRUNE_EVERY:
                self._prune()

    def named(self, names: set[str]) -> list[Entry]:
        """Every entry of any of ``names``."""
        found = {k: e for k, e in self._memory.items() if e.name in names}
        if self._dir is not None:
            with contextlib.suppress(OSError):
                for file in os.listdir(self._dir):
                    if file.startswith(".") or file.split("~", 1)[0] not in names or file in found:
                        continue
                    entry = self._read(self._dir / file)
                    if entry is not None:
                        found[file] = entry
        return list(found.values())

    def of(self, object_id: str) -> list[Entry]:
        """Every entry of ``object_id`` (ids repeat: newest submission first)."""
        found = {k: e for k, e in self._memory.items() if e.object_id == object_id}
        if self._dir is not None:
            with contextlib.suppress(OSError):
                for file in os.listdir(self._dir):
                    parts = file.split("~")
                    if len(parts) == 3 and parts[1] == object_id and file not in found:
                        entry = self._read(self._dir / file)
                        if entry is not None:
                            found[file] = entry
        return sorted(found.values(), key=lambda e: e.submitted or 0, reverse=True)

    @staticmethod
    def _read(path: Path) -> Entry | None:
        try:
            data = json.loads(path.read_text())
            return Entry(**data)
        except (OSError, ValueError, TypeError):
            return None

    def _prune(self) -> None:
        """Remove the entries not written for ``_KEPT_DAYS`` (now and then, as a new one is written)."""
        assert self._dir is not None
        cutoff = time.time() - _KEPT_DAYS * 86400
        for file in os.listdir(self._dir):
            with contextlib.suppress(OSError):
                path = self._dir / file
                if path.stat().st_mtime < cutoff:
                    path.unlink()
