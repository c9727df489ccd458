"""Directories that hold records, locks and pointers: the user's own, 0700, never a symlink.

One rule, the record root's: dunscaith sets a mode only on a directory it creates, in the call that
creates it. An existing directory is never ``chmod``-ed, whoever made it (dunscaith's own subfolders
included: one can only be open if someone opened it after dunscaith made it 0700, and silently undoing
that would be changing what is not ours to change). It is used when it is a real directory (not a
symlink), the user's own and closed to group and others, and refused otherwise, naming the fix.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
from collections.abc import Mapping

from dunscaith.domain.model.path_names import parent

# pathlib (~4 ms) is not imported on the wrapper's path: its instance directory is a str (a name may be
# either; a str's parent is the one pathlib would give, ``path_names.parent``)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeVar

    P = TypeVar("P", str, Path)


class UnsafeDirectory(Exception):
    """A directory that may not hold the user's records (symlink, another owner, open to others, not a directory)."""


class MissingHome(UnsafeDirectory):
    """A folder to make is the home folder, or one above it, and the home folder does not exist: the
    user's home is never made by dunscaith or qdevices (``HOME=/nonexistent/home dunscaith list`` made
    ``/nonexistent``), only their own folders inside an existing one."""


def default_user_dir(env: Mapping[str, str] | None = None) -> Path:
    """``/var/tmp/dunscaith-$USER``: a local disk on a conventional login node, unlike the home directory.

    The default record root, and the folder of ``remote run``'s own instances: one name for both.
    """
    from pathlib import Path

    env = os.environ if env is None else env
    user = env.get("USER") or pwd.getpwuid(os.geteuid()).pw_name
    return Path("/var/tmp") / f"dunscaith-{user}"


def ensure_private_dir(path: P, *, parents: bool = False, closed_to_others: bool = True) -> P:
    """Create ``path`` 0700 if missing, else check it: a real directory, owned by this user, closed to others.

    In a shared place such as /var/tmp another user could have created the name first, or made it
    a symlink to somewhere of theirs: both are refused rather than used. The checks are made on the
    opened directory (O_NOFOLLOW), so the name cannot be swapped between check and use. A directory
    made here gets exactly 0700 whatever the umask (and a setgid bit inherited from its parent is
    dropped); an existing one keeps its mode. ``closed_to_others=False`` accepts an existing
    directory open to others (one the user made for other programs too, such as
    ``~/.config/dunscaith`` holding their config.toml); it is still never changed.
    """
    if parents:
        _make_parents(_parent(path))
    _check(path, created=_mkdir(path), closed_to_others=closed_to_others)
    return path


def check_private_dir(path: str | os.PathLike[str]) -> None:
    """What ``ensure_private_dir`` refuses of an existing directory, found without making or changing
    anything (a reader of records checks the folder it reads as its writer would)."""
    _check(path, created=False)


def _check(path: str | os.PathLike[str], *, created: bool, closed_to_others: bool = True) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if os.path.islink(path):
            raise UnsafeDirectory(f"{path} is a symbolic link; refusing to keep records through it; "
                                  "give the directory itself") from None
        if exc.errno == errno.ENOTDIR:
            raise UnsafeDirectory(f"{path} is not a directory") from None
        raise UnsafeDirectory(f"{path} is not a directory you can use: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            raise UnsafeDirectory(f"{path} is owned by uid {st.st_uid}, not by you (uid {os.geteuid()}); "
                                  "give a directory of your own")
        mode = stat.S_IMODE(st.st_mode)
        if created:
            if mode != 0o700:  # the umask took bits away, or the parent's setgid bit was inherited
                os.fchmod(fd, 0o700)
                if stat.S_IMODE(os.fstat(fd).st_mode) != 0o700:
                    raise UnsafeDirectory(f"{path} was made but cannot be made 0700")
        elif closed_to_others and mode & 0o077:
            raise UnsafeDirectory(f"{path} is open to others (mode {mode:04o}) and dunscaith never changes the "
                                  f"mode of a directory it did not create; if it is yours alone, chmod 700 {path}")
    finally:
        os.close(fd)


def ensure_record_folder(path: Path, root: Path) -> Path:
    """A folder dunscaith keeps under the record ``root``, refused as the root itself is: ``RootUnsafe``,
    which every command gives in one line, exit 2, the folder untouched.

    Each folder from the root down to ``path`` is checked (``ensure_private_dir``), existing ones too:
    an open ``slurm-queries/`` is refused although the cluster's folder inside it is 0700. The root
    itself is the record root's to check; it is only made here when missing.
    """
    try:
        relative = path.relative_to(root).parts
    except ValueError:
        relative = ()
    try:
        if not relative:
            return ensure_private_dir(path, parents=True)
        _make_parents(root)  # the root and its missing ancestors, each 0700
        current = root
        for part in relative:
            current = ensure_private_dir(current / part)
        return current
    except UnsafeDirectory as exc:  # never re-moded: the user's to fix
        raise _root_unsafe(root, exc) from None


def check_record_folder(path: Path, root: Path) -> None:
    """What ``ensure_record_folder`` would refuse, found without making anything: each folder from
    the root down to ``path`` that exists is checked, and the walk ends at the first missing one (a
    command that only may need the folder, such as an emergency stop, leaves no trace)."""
    try:
        relative = path.relative_to(root).parts
    except ValueError:
        relative = ()
    current = root
    try:
        for part in relative:
            current = current / part
            if not os.path.lexists(current):
                return
            _check(current, created=False)
    except UnsafeDirectory as exc:
        raise _root_unsafe(root, exc) from None


def _root_unsafe(root: Path, exc: UnsafeDirectory) -> Exception:
    # imported here: remote run's lean entry uses this module and must not load the jobs domain
    from dunscaith.domain.model.jobs.root_errors import RootUnsafe

    return RootUnsafe(str(root), str(exc))


def _home() -> str | None:
    try:
        return os.path.abspath(os.environ.get("HOME") or pwd.getpwuid(os.geteuid()).pw_dir)
    except KeyError:  # no HOME, and a uid the password database does not know (a container's): no home to keep
        return None


def _refuse_making_home(path: str | os.PathLike[str]) -> None:
    """MissingHome when ``path`` is the home folder or a folder above it and is not there: see MissingHome.
    A few string operations on every folder made (the wrapper's start included); a stat only on a match."""
    home = _home()
    if home is None:
        return
    name = os.path.abspath(path)
    if (home == name or home.startswith(name.rstrip("/") + "/")) and not os.path.lexists(name):
        raise MissingHome(f"the home folder {home} does not exist: only folders inside an existing home are made, "
                          "never the home itself or a folder above it; set HOME to your home folder")


def make_missing_dirs(directory: P) -> None:
    """Make ``directory`` and its missing ancestors, as ``os.makedirs(mode=0o700)`` would (the umask applies;
    an existing one is left as it is), but never the home folder or one above it (MissingHome): for a
    folder shared with other programs (``~/.config``, ``~/.cache``) whose mode is not ours to set."""
    for each in missing_chain(directory):
        _mkdir(each)


def _mkdir(path: str | os.PathLike[str]) -> bool:
    """Make ``path`` 0700; True if this call made it, False if it was there (a name of any kind)."""
    _refuse_making_home(path)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        return False
    except OSError as exc:
        raise UnsafeDirectory(f"{path} cannot be created ({exc.strerror or exc})") from None
    return True


def missing_chain(path: P) -> list[P]:
    """``path`` and each of its ancestors that does not exist yet, outermost first (a dangling symlink
    exists): the folders a caller must create, in the order it must create them."""
    missing: list[P] = []
    current = path
    while not os.path.lexists(current) and current != (up := _parent(current)):
        missing.append(current)
        current = up
    return missing[::-1]


def _parent(path: P) -> P:
    return parent(path) if isinstance(path, str) else path.parent


def _make_parents(directory: P) -> None:
    """Create the missing ancestors of a directory, each 0700; an existing one is left as it is."""
    for each in missing_chain(directory):
        ensure_private_dir(each)
