"""Publish a whole file under its final name, never half of one, never over another.

The bytes go to a staging name of this writer's own, are synced, and are then *linked* to the final
name. A link never replaces: when the final name exists already, that file is the answer and this
write is dropped. A staging file left by a writer that died never blocks the next one, because every
writer picks a fresh staging name.
"""

from __future__ import annotations

import os

from dunscaith.adapters.durable.sync import sync_dir, sync_fd, sync_files

STAGING_PREFIX = ".staging."


def staging_name(final: str) -> str:
    # os.urandom is what secrets.token_hex uses, without importing hmac and random on a routed command's path
    return f"{STAGING_PREFIX}{final}.{os.getpid()}.{os.urandom(6).hex()}"


def write_synced(path: str | os.PathLike[str], data: bytes, mode: int = 0o600) -> None:
    """Create ``path`` exclusively (never through a symlink), write ``data`` and sync it."""
    _write_new(path, data, mode, sync=True)


def _write_new(path: str | os.PathLike[str], data: bytes, mode: int, *, sync: bool) -> None:
    """A file that could not be written whole is removed: a full disk (ENOSPC on the write or the sync)
    or a quota must not leave a 0-byte staging file behind for every try."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync:
            sync_fd(fd)
    except BaseException:
        os.close(fd)
        try:  # not contextlib.suppress: contextlib costs every local job's start ~0.5 ms to import
            os.unlink(path)
        except OSError:
            pass
        raise
    os.close(fd)


def publish(directory: str | os.PathLike[str], name: str, data: bytes, mode: int = 0o600, *,
            durable_name: bool = True) -> bool:
    """Put ``data`` at ``directory/name`` if nothing is there yet.

    Returns True when this call published the file, False when a file of that name already existed
    (then the existing file stands and ``data`` is discarded). ``durable_name=False`` skips the
    directory's sync: the file is still whole or absent after a power loss (its bytes are synced before
    its name exists), only its name may be lost, for a record whose loss its readers survive.
    """
    staging = os.path.join(directory, staging_name(name))
    write_synced(staging, data, mode)
    try:
        os.link(staging, os.path.join(directory, name), follow_symlinks=False)
        published = True
    except FileExistsError:
        published = False
    finally:
        os.unlink(staging)
    if durable_name:
        sync_dir(directory)
    return published


def replace(directory: str | os.PathLike[str], name: str, data: bytes, mode: int = 0o600, *,
            durable_name: bool = True) -> None:
    """Put ``data`` at ``directory/name``, replacing an older version whole (for pointers, not records).
    ``durable_name=False`` skips the directory's sync: after a power loss the name holds the new version
    or the older one, whole either way (the bytes are synced before the rename), for a rewrite whose
    loss only leaves what it said older."""
    staging = os.path.join(directory, staging_name(name))
    write_synced(staging, data, mode)
    try:
        os.replace(staging, os.path.join(directory, name))
    except BaseException:
        os.unlink(staging)
        raise
    if durable_name:
        sync_dir(directory)


def stage(directory: str | os.PathLike[str], name: str, data: bytes, mode: int = 0o600) -> tuple[str, str]:
    """``data`` written, not synced, to a staging file of its own beside ``directory/name``: (staging path,
    final path), for ``replace_staged`` once the files of a batch are synced together (``sync_files``)."""
    staging = os.path.join(directory, staging_name(name))
    _write_new(staging, data, mode, sync=False)
    return staging, os.path.join(directory, name)


def sync_staged(directory: str | os.PathLike[str], staged: list[tuple[str, str]]) -> None:
    """The staged files' bytes made durable at once (one sync of their filesystem where it can)."""
    sync_files(directory, [staging for staging, _ in staged])


def replace_staged(directory: str | os.PathLike[str], staged: list[tuple[str, str]], *,
                   durable_name: bool = True) -> None:
    """Each staged file (already synced: ``sync_staged``) renamed over its final name, then ``directory``
    synced once for all the names. A rename that fails leaves the files not yet renamed removed; the
    ones before it stand, each whole."""
    for at, (staging, final) in enumerate(staged):
        try:
            os.replace(staging, final)
        except BaseException:
            discard(staged[at:])
            raise
    if durable_name and staged:
        sync_dir(directory)


def discard(staged: list[tuple[str, str]]) -> None:
    """The staging files of a batch not carried through removed (those already renamed are not there)."""
    for staging, _ in staged:
        try:
            os.unlink(staging)
        except OSError:
            pass


def replace_cached(directory: str | os.PathLike[str], name: str, data: bytes, mode: int = 0o600) -> None:
    """``replace`` without syncing: for a cache whose every reader treats a missing or damaged file as absent.

    The rename still makes a reader see the old file or the new one whole while the system runs. Only
    a power loss can leave the new name empty or torn (or keep the old version); the reader then
    refuses it as undecodable or too old and asks again. Two fsyncs per write are spared, which for a
    file rewritten on every poll is most of its cost.
    """
    staging = os.path.join(directory, staging_name(name))
    _write_new(staging, data, mode, sync=False)
    try:
        os.replace(staging, os.path.join(directory, name))
    except BaseException:
        os.unlink(staging)
        raise
