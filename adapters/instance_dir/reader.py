"""Read an instance directory: the lock first, then its files in the reverse order of their writing.

The wrapper takes the lock before it writes anything and releases it last of all, so the lock is
probed first; then the names are listed and each file is read before the ones written ahead of it,
so a file seen implies every file written before it is seen too. A file removed before it is read is
absent. Each file is read with ``read_private`` (no link, no FIFO, yours, bounded); one that fails
those checks is not what this instance could have written, and is refused like a damaged one.
"""

from __future__ import annotations

import os
from pathlib import Path

from dunscaith.adapters.durable.lock import is_held
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.adapters.durable.publish import STAGING_PREFIX
from dunscaith.domain.model.remote.control import (
    LAUNCHING,
    LOCK,
    NOTE_BYTES,
    Blocked,
    ControlError,
    InstanceRecords,
    decode_files,
    decode_note,
    reading_order,
)
from dunscaith.domain.model.remote.state import State, state_of

MAX_CONTROL_FILE = 1 << 20


class NotAnInstance(ControlError):
    """The path is not an instance directory (missing, not a directory, holding neither lock nor launch, or
    only a lock that no wrapper holds).

    A ControlError, so a reader that refuses damaged control files refuses this too.
    """


def read_instance_dir(directory: Path, *, missing_is_empty: bool = False) -> tuple[bool, InstanceRecords]:
    """Whether the instance's wrapper is live, and its records.

    A missing directory is NotAnInstance, or an instance not yet begun with ``missing_is_empty`` (the
    local scheduler names the directory before the wrapper makes it). Raises ControlError for files
    no instance could have written, OSError for a directory that cannot be read.
    """
    live, records = _read_once(directory, missing_is_empty)
    if _stray_lock(directory, live, records, missing_is_empty):
        # A wrapper creates its lock, then takes it: probed between the two, its lock reads as stray. Probed
        # again, after the listing found the file: a wrapper that is claiming the directory holds it now.
        live, records = _read_once(directory, missing_is_empty)
        if _stray_lock(directory, live, records, missing_is_empty):
            raise NotAnInstance(f"{directory}: not an instance directory (a {LOCK} no wrapper holds, and no "
                                f"{LAUNCHING}: no `remote run` ever started here)")
    if state_of(records, live) is State.LOST:
        # "No lock, then a launch without an end" is a lost wrapper only if the lock was probed after
        # the wrapper took it. A wrapper that claimed the directory (lock first, then launching.json)
        # between the probe and the listing reads the same way, and a loaded host widens that window.
        # Probed again, now after launching.json is known to exist: a live wrapper holds the lock, and
        # one that ended since wrote its outcome before releasing it, so this reading has it.
        live, records = _read_once(directory, missing_is_empty)
    return live, records


def _stray_lock(directory: Path, live: bool, records: InstanceRecords, missing_is_empty: bool) -> bool:
    """A directory the user named holding a lock no wrapper holds and nothing a wrapper writes next
    (``launching.json`` is its first record): not an instance, whatever made the lock. A directory the
    local scheduler named (``missing_is_empty``) keeps reading as not begun: its wrapper may be starting."""
    return (not missing_is_empty and not live and records.launching is None
            and os.path.lexists(directory / LOCK))


def _read_once(directory: Path, missing_is_empty: bool) -> tuple[bool, InstanceRecords]:
    try:
        live = is_held(directory / LOCK)
    except NotADirectoryError:
        raise NotAnInstance(f"{directory}: not a directory") from None
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        if not missing_is_empty:
            raise NotAnInstance(f"{directory}: no such directory") from None
        names = []
    except NotADirectoryError:
        raise NotAnInstance(f"{directory}: not a directory") from None
    used = [n for n in names if not n.startswith(STAGING_PREFIX)]
    if used and LOCK not in used and LAUNCHING not in used:  # an empty directory is an instance not yet begun
        raise NotAnInstance(f"{directory}: not an instance directory (no lock, no launching.json)")
    files: dict[str, bytes] = {}
    for name in reading_order(used):
        try:
            files[name] = read_private(directory / name, MAX_CONTROL_FILE)
        except FileNotFoundError:
            continue  # removed before it was read, or never written: absent
        except UnsafeFile as exc:
            raise ControlError(f"{name}: {exc.reason}") from None
    records = decode_files(files)
    if records.outcome is None and LOCK in used:
        # Read last: a note cleared meanwhile means its file is written now, and the next reading has it.
        # Without a live wrapper it is what kept the wrapper from recording its outcome before it ended.
        note = _note(directory)
        if note is not None:
            records = records._replace(blocked=note)
    return live, records


def _note(directory: Path) -> Blocked | None:
    """The wrapper's note in its lock file (display only: a lock file that does not read has none)."""
    try:
        return decode_note(read_private(directory / LOCK, NOTE_BYTES * 2))
    except (OSError, UnsafeFile):
        return None
