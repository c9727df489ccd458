"""Read a ``dunscaith remote run`` instance directory in-process, the way ``remote status`` does.

A query reads many objects; a subprocess per object would cost a Python start each. So the files are
read here, with the one decoder of ``domain.model.remote.control`` and the state rule of
``domain.model.remote.state``: the lock first, then the files in the reverse order of their writing,
so a file seen implies every file written before it; a file removed before it is read is absent.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from adapters.durable.lock import is_held
from adapters.durable.publish import STAGING_PREFIX
from domain.model.remote.control import (
    FAILURE,
    INSTANCE,
    KILLED,
    LAUNCHING,
    LOCK,
    OUTCOME,
    REQUEST,
    TERMINATED,
    InstanceRecords,
    decode_files,
    refused_number,
)
from domain.model.remote.state import State, state_of


@dataclass(frozen=True, slots=True)
class InstanceReading:
    live: bool
    records: InstanceRecords
    state: State


def read_instance(directory: Path) -> InstanceReading:
    """The instance's state; a missing directory reads as ``empty``. Raises ControlError, OSError."""
    live = is_held(directory / LOCK)
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        names = []
    refused = sorted((n for n in names if refused_number(n) is not None), key=lambda n: -(refused_number(n) or 0))
    order = [OUTCOME, KILLED, TERMINATED, *refused, REQUEST, FAILURE, INSTANCE, LAUNCHING]
    files: dict[str, bytes] = {}
    for name in order:
        if name.startswith(STAGING_PREFIX):
            continue
        data = _read_if_present(directory / name)
        if data is not None:
            files[name] = data
    records = decode_files(files)
    return InstanceReading(live, records, state_of(records, live))


def _read_if_present(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
