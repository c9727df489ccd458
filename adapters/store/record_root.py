"""The record root: a private local directory bound to this machine by its HOST file.

A job's lock is an flock and its record is SQLite in WAL mode; both are only sound where one kernel
sees every access. So the root must be on a local filesystem, must be the user's own (it usually lives
in a shared place such as /var/tmp, where another user could have made the name first), and must be
this machine's: a root copied or mounted onto another host is refused there rather than used.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from adapters.durable.private_read import UnsafeFile, read_private
from adapters.durable.publish import publish
from domain.model.jobs.record import HostIdentity
from domain.model.jobs.root_errors import RootHostFileDamaged, RootOfAnotherHost, RootOnNetworkFilesystem, RootUnsafe
from domain.model.strict_json import DecodeError, decode_exact, dumps_canonical
from ports.host import HostInfo

HOST_FILE = "HOST"
_MAX_HOST_FILE_BYTES = 4096
_HOST_FIELDS = {"machine_id": (str,), "hostname": (str,)}


@dataclass(frozen=True, slots=True)
class RecordRoot:
    """A root that passed every check: a local private directory whose HOST is this machine."""

    path: Path
    host: HostIdentity


def default_records_root(env: Mapping[str, str] | None = None) -> Path:
    """``/var/tmp/dunscaith-$USER``: a local disk on a conventional login node, unlike the home directory."""
    env = os.environ if env is None else env
    user = env.get("USER") or pwd.getpwuid(os.geteuid()).pw_name
    return Path("/var/tmp") / f"dunscaith-{user}"


def describe_host(identity: HostIdentity) -> str:
    return f"{identity.hostname} (machine id {identity.machine_id or 'unknown'})"


def open_record_root(path: Path, host: HostInfo) -> RecordRoot:
    """Check ``path`` as a record root (creating it on first use) and bind it to this host.

    Raises a RecordRootRefused subclass naming the root and the setting to change.
    """
    path = Path(os.path.abspath(path))  # abspath, not resolve: a symlinked root must be seen, not followed
    filesystem = host.filesystem(path)
    if filesystem.is_network:
        raise RootOnNetworkFilesystem(str(path), filesystem.name)
    try:
        ensure_private_dir(path, parents=True)
    except UnsafeDirectory as exc:
        raise RootUnsafe(str(path), _why(exc, path)) from None
    except OSError as exc:
        raise RootUnsafe(str(path), exc.strerror or str(exc)) from None
    this = host.identity()
    recorded = _bind(path, this)
    if recorded != this:
        raise RootOfAnotherHost(str(path), describe_host(recorded), describe_host(this), recorded.hostname)
    return RecordRoot(path=path, host=this)


def _why(exc: UnsafeDirectory, path: Path) -> str:
    # ensure_private_dir names the path itself; the refusal names it once already.
    return str(exc).removeprefix(f"{path} ").removeprefix("is ")


def _bind(root: Path, this: HostIdentity) -> HostIdentity:
    """Publish this host as the root's HOST if it has none; either way, the host the root belongs to."""
    data = dumps_canonical({"machine_id": this.machine_id, "hostname": this.hostname})
    try:
        if publish(root, HOST_FILE, data):
            return this
    except OSError as exc:
        raise RootUnsafe(str(root), f"its HOST file cannot be written ({exc.strerror or exc})") from None
    return read_host_file(root)


def read_host_file(root: Path) -> HostIdentity:
    try:
        text = read_private(root / HOST_FILE, _MAX_HOST_FILE_BYTES)
    except UnsafeFile as exc:
        raise RootHostFileDamaged(str(root), exc.reason) from None
    except OSError as exc:
        raise RootHostFileDamaged(str(root), exc.strerror or str(exc)) from None
    try:
        fields = decode_exact(text, _HOST_FIELDS, "HOST")
    except DecodeError as exc:
        raise RootHostFileDamaged(str(root), str(exc)) from None
    return HostIdentity(machine_id=fields["machine_id"], hostname=fields["hostname"])
