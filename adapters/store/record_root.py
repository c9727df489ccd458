"""The record root: a private local directory bound to this machine by its HOST file.

A job's lock is an flock and its record is SQLite in WAL mode; both are only sound where one kernel
sees every access. So the root must be on a local filesystem, must be the user's own (it usually lives
in a shared place such as /var/tmp, where another user could have made the name first), and must be
this machine's: a root copied or mounted onto another host is refused there rather than used.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from dunscaith.adapters.durable.private_dir import default_user_dir, missing_chain
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.adapters.durable.publish import STAGING_PREFIX, publish
from dunscaith.adapters.durable.sync import sync_dir
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.root_errors import (
    RootHostFileDamaged,
    RootOfAnotherHost,
    RootOnNetworkFilesystem,
    RootUnsafe,
)
from dunscaith.domain.model.strict_json import DecodeError, decode_exact, dumps_canonical
from dunscaith.ports.host import HostInfo

HOST_FILE = "HOST"
_MAX_HOST_FILE_BYTES = 4096
# What dunscaith itself may have put in a root before its HOST: commands that open no store make their
# folders there (`remote run`'s instances, a forwarded command's instances on its owning host, `stop
# --emergency`'s local scheduler, a Slurm cluster's shared queries). Named here, not imported: adapters
# do not import each other. Anything else is someone else's.
_OWN_ENTRIES = frozenset({"instances", "forwarded", "local-scheduler", "slurm-queries", "locks"})
_HOST_FIELDS = {"machine_id": (str,), "hostname": (str,)}
# Linux's limits (<linux/limits.h>), which every local filesystem dunscaith accepts keeps to; macOS's are
# 1024 and 255. Checked up front: the kernel's ENAMETOOLONG would come from whichever call met it first.
_PATH_MAX = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 1024
_NAME_MAX = 255


class RecordRoot(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    """A root that passed every check: a local private directory whose HOST is this machine."""

    path: Path
    host: HostIdentity


def default_records_root(env: Mapping[str, str] | None = None) -> Path:
    """``/var/tmp/dunscaith-$USER``: a local disk on a conventional login node, unlike the home directory."""
    return default_user_dir(env)


def describe_host(identity: HostIdentity) -> str:
    return f"{identity.hostname} (machine id {identity.machine_id or 'unknown'})"


def _placed(path: Path, host: HostInfo) -> Path:
    """``path`` made absolute, refused when it is too long or on a network filesystem (both checks')."""
    path = Path(os.path.abspath(path))  # abspath, not resolve: a symlinked root must be seen, not followed
    too_long = _too_long(path)
    if too_long is not None:
        raise RootUnsafe(shown_path(path), too_long)
    filesystem = host.filesystem(path)
    if filesystem.is_network:
        raise RootOnNetworkFilesystem(str(path), filesystem.name)
    return path


def open_record_root(path: Path, host: HostInfo) -> RecordRoot:
    """Check ``path`` as a record root (creating it on first use) and bind it to this host.

    Raises a RecordRootRefused subclass naming the root and the setting to change.
    """
    path = _placed(path, host)
    _claim(path)
    this = host.identity()
    recorded = _bind(path, this)
    if recorded != this:
        raise RootOfAnotherHost(str(path), describe_host(recorded), describe_host(this), recorded.hostname)
    return RecordRoot(path=path, host=this)


def check_record_root(path: Path, host: HostInfo) -> bool:
    """What ``open_record_root`` would refuse of ``path``, found without making anything (no folder, no
    HOST): the same RecordRootRefused, word for word. True when the root is bound already (its HOST is
    there); False when it is not made yet (or is an empty folder): nothing can be recorded there, and a
    command that only reads (``list``) need not make it."""
    path = _placed(path, host)
    missing = missing_chain(path)
    if missing:
        _creatable(path, missing[0])
        return False
    _check_directory(path, created=False)
    try:
        recorded = read_host_file(path)
    except RootHostFileMissing:
        return False
    this = host.identity()
    if recorded != this:
        raise RootOfAnotherHost(str(path), describe_host(recorded), describe_host(this), recorded.hostname)
    return True


def _too_long(path: Path) -> str | None:
    """Why no system call could take ``path`` (ENAMETOOLONG), found before any folder of it is made."""
    whole = len(os.fsencode(path))
    if whole >= _PATH_MAX:
        return f"the path is {whole} bytes long, and the system takes at most {_PATH_MAX - 1}"
    for part in path.parts[1:]:
        size = len(os.fsencode(part))
        if size > _NAME_MAX:
            return f"its part {shown_path(part, 24)} is {size} bytes long, and a file name may be at most {_NAME_MAX}"
    return None


def shown_path(path: Path | str, keep: int = 100) -> str:
    """A path for a one-line message: whole when short, else its start and end around an ellipsis."""
    text = str(path)
    return text if len(text) <= keep else f"{text[:keep * 2 // 3]}…{text[-(keep // 3):]}"


def _claim(path: Path) -> None:
    """Make ``path`` a record root, or check that it is one: never take over a directory that is not.

    A directory this call creates is made 0700. An existing one is used only if it is the user's own,
    closed to others and either empty or a root already (it has a HOST file); its mode is never
    changed, since the user (or a group project) chose it. Refusals say how to fix it.
    """
    _check_directory(path, _make_missing(path))


def _check_directory(path: Path, created: bool) -> None:
    """``_claim``'s checks of the directory at ``path`` (which this call ``created``, or found)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise RootUnsafe(str(path), "a symbolic link; refusing to keep records through it") from None
        if exc.errno == errno.ENOTDIR:
            raise RootUnsafe(str(path), "it is not a directory") from None
        raise RootUnsafe(str(path), exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise RootUnsafe(str(path), f"it is owned by uid {st.st_uid}, not by you (uid {os.geteuid()})")
        if created:
            return
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            raise RootUnsafe(str(path), f"it is open to others (mode {mode:04o}) and dunscaith never changes the mode "
                                        f"of a directory it did not create; if it is yours alone, chmod 700 {path}")
        # a HOST still being published by another process's first use is there as its staging file
        foreign = {name for name in os.listdir(fd) if not name.startswith(STAGING_PREFIX)} - _OWN_ENTRIES
        if foreign and HOST_FILE not in foreign:
            raise RootUnsafe(str(path), f"it is not a record root (it holds {len(foreign)} other entries and no "
                                        "HOST file), and dunscaith takes over only an empty directory")
    finally:
        os.close(fd)


def _creatable(path: Path, first: Path) -> None:
    """Whether ``_make_missing`` could make ``first`` (the outermost missing folder of ``path``), asked
    without making it: the refusal its ``mkdir`` would meet, in its words."""
    parent = first.parent
    try:
        st = os.stat(parent)
    except OSError as exc:
        raise RootUnsafe(str(path), f"{first} cannot be created ({exc.strerror or exc})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise RootUnsafe(str(path), f"{parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RootUnsafe(str(path), f"{first} cannot be created ({os.strerror(errno.EACCES)})")


def _make_missing(path: Path) -> bool:
    """Create ``path`` and any missing parent, each 0700; True if ``path`` itself was created here."""
    missing = missing_chain(path)
    created = False
    for directory in missing:
        try:
            os.mkdir(directory, 0o700)
            created = directory == path
        except FileExistsError:
            created = False  # another process made it first: checked as an existing directory
        except NotADirectoryError:
            raise RootUnsafe(str(path), f"{directory.parent} is not a directory") from None
        except OSError as exc:
            raise RootUnsafe(str(path), f"{directory} cannot be created ({exc.strerror or exc})") from None
    if missing:
        sync_dir(missing[0].parent)
    return created


def _bind(root: Path, this: HostIdentity) -> HostIdentity:
    """The host the root belongs to: its HOST file, read first; published as this host only when missing.

    Read first, so that a root that is bound already is used without writing anything: a read command on
    a full disk, or on a root the user can read but not write, still reads (and leaves no staging file)."""
    try:
        return read_host_file(root)
    except RootHostFileMissing:
        pass
    data = dumps_canonical({"machine_id": this.machine_id, "hostname": this.hostname})
    try:
        if publish(root, HOST_FILE, data):
            return this
    except OSError as exc:
        raise RootUnsafe(str(root), f"it has no HOST file yet, and it cannot be written ({exc.strerror or exc})"
                         ) from None
    return read_host_file(root)  # another process's first use published it meanwhile


class RootHostFileMissing(RootHostFileDamaged):
    """No HOST file at all: a root not bound yet (``_bind`` binds it; any other reader calls it damaged)."""


def read_host_file(root: Path) -> HostIdentity:
    try:
        text = read_private(root / HOST_FILE, _MAX_HOST_FILE_BYTES)
    except FileNotFoundError:
        raise RootHostFileMissing(str(root), "it is missing") from None
    except UnsafeFile as exc:
        raise RootHostFileDamaged(str(root), exc.reason) from None
    except OSError as exc:
        raise RootHostFileDamaged(str(root), exc.strerror or str(exc)) from None
    try:
        fields = decode_exact(text, _HOST_FIELDS, "HOST")
    except DecodeError as exc:
        raise RootHostFileDamaged(str(root), str(exc)) from None
    return HostIdentity(machine_id=fields["machine_id"], hostname=fields["hostname"])
