"""FlockSiteLock: one live call per site, from one host.

``<state>/<site>.lock`` carries an exclusive flock; ``<state>/<site>.holder`` names the holder (host,
pid, start time). The holder file is there because a cluster file system can grant a flock on each
node with no error: the flock keeps out a second call on this host, the holder file one on another.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from dunscaith.adapters.durable.liveness import pid_alive, process_start
from dunscaith.adapters.durable.lock import FlockLock, LockHeld
from dunscaith.adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir
from dunscaith.adapters.durable.private_read import UnsafeFile, read_private
from dunscaith.adapters.durable.publish import replace
from dunscaith.adapters.durable.sync import sync_dir
from dunscaith.domain.model.strict_json import DecodeError, decode_exact, dumps_canonical
from dunscaith.ports.site_lock import Holder, SiteLockRefused

HOLDER_FIELDS = {"host": (str,), "pid": (int,), "started": (str,), "proc_start": (str,)}
_MAX_HOLDER_BYTES = 64 * 1024
NO_FLOCK = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


class FlockSiteLock:
    def __init__(self, state_dir: Path, host: str) -> None:
        self.state_dir = Path(os.path.abspath(state_dir))
        self.host = host

    def _paths(self, site: str) -> tuple[Path, Path]:
        return self.state_dir / f"{site}.lock", self.state_dir / f"{site}.holder"

    def _read_holder(self, path: Path) -> dict[str, object] | None:
        try:
            data = read_private(path, _MAX_HOLDER_BYTES)
        except FileNotFoundError:
            return None
        except UnsafeFile as exc:
            raise SiteLockRefused(f"{path}: cannot be read ({exc.reason})") from None
        except OSError as exc:
            raise SiteLockRefused(f"{path}: cannot be read ({exc.strerror})") from None
        try:
            return decode_exact(data, HOLDER_FIELDS, str(path))
        except DecodeError as exc:
            raise SiteLockRefused(f"{exc}: not a holder file of this app; remove it by hand if no call runs") from None

    def _take_flock(self, site: str) -> FlockLock:
        try:
            ensure_private_dir(self.state_dir, parents=True)
        except UnsafeDirectory as exc:
            raise SiteLockRefused(str(exc)) from None
        lock_path, holder_path = self._paths(site)
        lock = FlockLock(lock_path)
        try:
            lock.acquire()
        except LockHeld:
            holder = None
            try:
                holder = self._read_holder(holder_path)
            except SiteLockRefused:
                pass
            who = f" (pid {holder['pid']} on {holder['host']} since {holder['started']})" if holder else ""
            raise SiteLockRefused(f"a live call on {site} runs{who}: wait for it to end") from None
        except OSError as exc:
            if exc.errno in NO_FLOCK:
                raise SiteLockRefused(f"{lock_path}: no flock here ({exc.strerror}): use a host whose home "
                                      "folder has flock") from None
            # a directory, a symlink, a file of someone else: not a lock file of this app
            raise SiteLockRefused(f"{lock_path}: cannot be opened as a lock file ({exc.strerror or exc}); "
                                  "if no call runs, move it aside") from None
        return lock

    @contextmanager
    def hold(self, site: str) -> Iterator[Holder]:
        lock = self._take_flock(site)
        _, holder_path = self._paths(site)
        mine: dict[str, object] | None = None
        try:
            old = self._read_holder(holder_path)
            if old is not None:
                if old["host"] != self.host:
                    raise SiteLockRefused(
                        f"{site} is held by host {old['host']} (pid {old['pid']}, since {old['started']}): check "
                        f"that host, then give qdevices unlock {site} --host {old['host']}")
                if pid_alive(int(str(old["pid"])), str(old["proc_start"])) and old["pid"] != os.getpid():
                    raise SiteLockRefused(
                        f"{site}: pid {old['pid']} of this host still holds it, yet the flock was granted: this "
                        "home folder's flock does not work; use a host whose home folder has flock")
                # a holder of this host whose process has ended: cleared by writing ours over it
            pid = os.getpid()
            mine = {"host": self.host, "pid": pid, "started": datetime.now(UTC).isoformat(),
                    "proc_start": process_start(pid)}
            try:
                replace(self.state_dir, holder_path.name, dumps_canonical(mine))
            except OSError as exc:
                raise SiteLockRefused(f"{holder_path}: no holder file can be written ({exc.strerror})") from None
            if self._read_holder(holder_path) != mine:
                raise SiteLockRefused(f"{holder_path}: the holder file does not read back")
            yield Holder(self.host, pid, str(mine["started"]))
        finally:
            try:
                if mine is not None and self._read_holder(holder_path) == mine:
                    os.unlink(holder_path)
                    sync_dir(self.state_dir)
            except (OSError, SiteLockRefused):
                pass  # a holder file left behind is cleared by the next call of this host
            lock.release()

    def unlock(self, site: str, host: str) -> Holder | None:
        lock = self._take_flock(site)
        _, holder_path = self._paths(site)
        try:
            old = self._read_holder(holder_path)
            if old is None:
                return None
            if old["host"] != host:
                raise SiteLockRefused(f"the holder of {site} is host {old['host']}, not {host}: nothing cleared")
            os.unlink(holder_path)
            sync_dir(self.state_dir)
            return Holder(str(old["host"]), int(str(old["pid"])), str(old["started"]))
        finally:
            lock.release()
