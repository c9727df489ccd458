"""Where a local object lives and what its spec file says.

``<base>/<object id>/`` (0700) holds:

- ``object.json``: the spec (name, nonce, argv or script, workdir); the object exists from the
  moment this file is linked into place, and never before;
- ``env.json``: the worker's environment, captured when the object was made (0600; values are kept
  here so that they never appear on a command line), removed by the shim as the worker starts;
- ``script``: the batch script, when the job is a script (0700);
- ``step.<k>.json``: the decisions taken on the object, in order (see ``steps.py``);
- ``launch.lock``: held while someone is responsible for starting the object (see ``scheduler.py``);
- ``stdout``, ``stderr``: what the process owner and its worker wrote;
- ``instance/``: the instance directory of ``dunscaith remote run``;
- ``time-limit-reached``, ``memory-limit-reached``: written by the job's watchdog (``exec_shim.py``) when
  it ends the job at its time limit or past its memory.

An object id is ``<8 hex of the name's digest>-<UTC time>-<8 random hex>``: the digest lets a query
for some names skip every other job's objects by directory name alone.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.strict_json import DecodeError, decode_exact, dumps_canonical

OBJECT = "object.json"
ENV = "env.json"
TIME_LIMIT_MARK = "time-limit-reached"  # written by exec_shim's watchdog when it stops the job at its limit
OOM_MARK = "memory-limit-reached"  # written by the watchdog when it kills the job past its memory: "KiB KiB"
SCRIPT = "script"
LAUNCH_LOCK = "launch.lock"
STDOUT = "stdout"
STDERR = "stderr"
INSTANCE_DIR = "instance"

OBJECT_FORMAT = "dunscaith.local-scheduler.object/1"
ENV_FORMAT = "dunscaith.local-scheduler.env/1"

_ID = re.compile(r"[0-9a-f]{8}-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}")


def name_digest(name: JobId) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def new_object_id(name: JobId, now: datetime) -> ObjectId:
    return ObjectId(f"{name_digest(name)}-{now.astimezone(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(4)}")


def is_object_id(text: str) -> bool:
    """Only names this scheduler makes: an id is also a path component, so nothing else may pass."""
    return _ID.fullmatch(text) is not None


class StoredSpec(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    object_id: ObjectId
    name: JobId
    nonce: Nonce
    command: tuple[str, ...]
    script: bool  # the script text is in the ``script`` file
    workdir: str
    created_at: str

    def encode(self) -> bytes:
        return dumps_canonical(
            {
                "format": OBJECT_FORMAT,
                "object_id": self.object_id,
                "name": self.name,
                "nonce": self.nonce,
                "command": list(self.command),
                "script": self.script,
                "workdir": self.workdir,
                "created_at": self.created_at,
            }
        )


_SPEC_FIELDS: Mapping[str, tuple[type, ...]] = {
    "format": (str,),
    "object_id": (str,),
    "name": (str,),
    "nonce": (str,),
    "command": (list,),
    "script": (bool,),
    "workdir": (str,),
    "created_at": (str,),
}


def decode_spec(data: bytes, directory: Path) -> StoredSpec:
    what = str(directory / OBJECT)
    obj: dict[str, Any] = decode_exact(data, _SPEC_FIELDS, what)
    if obj["format"] != OBJECT_FORMAT:
        raise DecodeError(f"{what}: format {obj['format']!r}, expected {OBJECT_FORMAT}")
    if obj["object_id"] != directory.name:
        raise DecodeError(f"{what}: names object {obj['object_id']!r}, not its directory {directory.name!r}")
    if not all(isinstance(a, str) for a in obj["command"]):
        raise DecodeError(f"{what}: command holds a non-string")
    return StoredSpec(
        object_id=ObjectId(obj["object_id"]),
        name=JobId(obj["name"]),
        nonce=Nonce(obj["nonce"]),
        command=tuple(obj["command"]),
        script=obj["script"],
        workdir=obj["workdir"],
        created_at=obj["created_at"],
    )


def encode_env(env: Mapping[str, str], limits: Mapping[str, int | str] | None = None) -> bytes:
    """The worker's environment, and the limits exec_shim applies before it execs the job (cpus,
    memory_mb, time_limit_s; only those asked)."""
    return dumps_canonical({"format": ENV_FORMAT, "env": dict(env), "limits": dict(limits or {})})
