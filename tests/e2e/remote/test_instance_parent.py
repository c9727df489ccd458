"""`remote run` without --instance-dir never re-modes the folder its instances go in (issue 10).

The folder is /var/tmp/dunscaith-$USER (the default record root) and its `instances/`. One made by
`run` is 0700 whatever the umask; an existing one is used only if it is yours and closed to others,
else refused in one line, exit 2, naming the folder and the fix, and left exactly as it was.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.remote.conftest import DUNSCAITH, read_json


@pytest.fixture
def user(tmp_path: Path) -> Iterator[str]:
    """A user name of the test's own, so /var/tmp/dunscaith-$USER is a folder only this test uses."""
    name = f"badinput-{secrets.token_hex(4)}"
    yield name
    parent = Path(f"/var/tmp/dunscaith-{name}")
    if parent.is_symlink():
        parent.unlink()
    elif parent.exists():
        shutil.rmtree(parent)


def parent_of(user: str) -> Path:
    return Path(f"/var/tmp/dunscaith-{user}")


def run(tmp_path: Path, user: str, umask: int | None = None) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "USER": user}
    return subprocess.run([DUNSCAITH, "remote", "run", "--", "true"], capture_output=True, text=True, timeout=60,
                          env=env, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_without_an_instance_dir_a_private_one_is_made_and_named_on_stderr(tmp_path: Path, user: str) -> None:
    # a user name of the test's own: the instance is made where yours would be, in a folder the fixture removes
    done = run(tmp_path, user)
    assert done.returncode == 0
    prefix = "dunscaith: instance directory: "
    assert done.stderr.startswith(prefix)
    directory = Path(done.stderr[len(prefix):].strip())
    assert directory.parent == parent_of(user) / "instances"
    assert read_json(directory / "outcome.json")["exit_code"] == 0
    assert mode(directory) == 0o700


def made_instance(done: subprocess.CompletedProcess[str]) -> Path:
    prefix = "dunscaith: instance directory: "
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(prefix)
    directory = Path(done.stderr[len(prefix):].strip())
    assert read_json(directory / "outcome.json")["exit_code"] == 0
    return directory


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o277])
def test_a_missing_parent_is_made_0700_whatever_the_umask(tmp_path: Path, user: str, umask: int) -> None:
    directory = made_instance(run(tmp_path, user, umask))
    parent = parent_of(user)
    assert directory.parent == parent / "instances"
    assert [mode(parent), mode(parent / "instances"), mode(directory)] == [0o700, 0o700, 0o700]


def test_an_existing_private_parent_is_used_and_keeps_its_mode(tmp_path: Path, user: str) -> None:
    parent = parent_of(user)
    parent.mkdir()
    os.chmod(parent, 0o700)
    (parent / "records.db").write_bytes(b"")  # whatever else is in it is not touched either
    directory = made_instance(run(tmp_path, user))
    assert directory.parent == parent / "instances" and mode(parent) == 0o700
    assert (parent / "records.db").read_bytes() == b""


@pytest.mark.parametrize("open_mode", [0o755, 0o2775])
def test_a_parent_open_to_others_is_refused_in_one_line_and_left_as_it_was(tmp_path: Path, user: str,
                                                                            open_mode: int) -> None:
    parent = parent_of(user)
    parent.mkdir()
    os.chmod(parent, open_mode)
    done = run(tmp_path, user)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (f"dunscaith: instance directories cannot be made: {parent} is open to others "
                           f"(mode {open_mode:04o}) and dunscaith never changes the mode of a directory it did "
                           f"not create; if it is yours alone, chmod 700 {parent}; or give --instance-dir DIR\n")
    assert mode(parent) == open_mode
    assert os.listdir(parent) == []


def test_an_open_instances_folder_is_refused_and_left_as_it_was(tmp_path: Path, user: str) -> None:
    parent = parent_of(user)
    made_instance(run(tmp_path, user))
    os.chmod(parent / "instances", 0o755)
    done = run(tmp_path, user)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert f"{parent / 'instances'} is open to others (mode 0755)" in done.stderr
    assert f"chmod 700 {parent / 'instances'}" in done.stderr
    assert mode(parent / "instances") == 0o755 and len(os.listdir(parent / "instances")) == 1


def test_a_symlinked_parent_is_refused_and_its_target_left_as_it_was(tmp_path: Path, user: str) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    os.chmod(target, 0o755)
    parent_of(user).symlink_to(target)
    done = run(tmp_path, user)
    assert done.returncode == 2
    assert done.stderr == (f"dunscaith: instance directories cannot be made: {parent_of(user)} is a symbolic link; "
                           "refusing to keep records through it; give the directory itself; or give --instance-dir "
                           "DIR\n")
    assert mode(target) == 0o755 and os.listdir(target) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a folder owned by another uid")
def test_a_parent_of_another_uid_is_refused_and_left_as_it_was(tmp_path: Path, user: str) -> None:
    parent = parent_of(user)
    parent.mkdir()
    os.chmod(parent, 0o755)
    os.chown(parent, 65534, 65534)
    done = run(tmp_path, user)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert f"{parent} is owned by uid 65534, not by you" in done.stderr
    st = os.lstat(parent)
    assert (stat.S_IMODE(st.st_mode), st.st_uid, os.listdir(parent)) == (0o755, 65534, [])


def test_a_given_instance_dir_open_to_others_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)
    given = shared / "inst"
    given.mkdir()
    os.chmod(given, 0o2775)
    done = subprocess.run([DUNSCAITH, "remote", "run", "--instance-dir", str(given), "--", "true"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert f"{given} is open to others (mode 2775)" in done.stderr
    assert mode(given) == 0o2775 and os.listdir(given) == []
    made = subprocess.run([DUNSCAITH, "remote", "run", "--instance-dir", str(shared / "new"), "--", "true"],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    assert (mode(shared), mode(shared / "new")) == (0o2775, 0o700)


@pytest.mark.parametrize(("args", "name"), [
    (["run", "--instance-dir", "", "--", "true"], "--instance-dir"),
    (["run", "--instance-dir=", "--", "true"], "--instance-dir"),
    (["run", "--cwd", "", "--", "true"], "--cwd"),
    (["run", "--env-file", "", "--", "true"], "--env-file"),
    (["status", ""], "DIR"),
    (["terminate", ""], "DIR"),
])
def test_an_empty_path_argument_is_named_in_one_line_never_read_as_the_current_directory(
        tmp_path: Path, args: list[str], name: str) -> None:
    here = tmp_path / "here"
    here.mkdir()
    os.chmod(here, 0o700)  # even a private, empty current directory is not taken for the empty name
    done = subprocess.run([DUNSCAITH, "remote", *args], capture_output=True, text=True, timeout=60, cwd=here)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"dunscaith: Invalid value for '{name}': is empty: give a path (an unset shell variable?)\n"
    assert os.listdir(here) == [] and mode(here) == 0o700
