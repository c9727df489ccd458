"""ensure_private_dir: a directory it makes is 0700 whatever the umask; an existing one is never re-moded."""

import os
import stat
from pathlib import Path

import pytest

from dunscaith.adapters.durable.private_dir import UnsafeDirectory, check_record_folder, ensure_private_dir
from dunscaith.domain.model.jobs.root_errors import RootUnsafe


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_creates_a_0700_directory(tmp_path: Path) -> None:
    d = ensure_private_dir(tmp_path / "root")
    assert mode(d) == 0o700


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077, 0o277])
def test_a_directory_it_makes_is_0700_whatever_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        d = ensure_private_dir(tmp_path / "a" / "b" / "root", parents=True)
    finally:
        os.umask(old)
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", d)] == [0o700] * 3


def test_a_directory_made_in_a_setgid_parent_drops_the_inherited_setgid_bit(tmp_path: Path) -> None:
    parent = tmp_path / "project"
    parent.mkdir()
    os.chmod(parent, 0o2775)
    d = ensure_private_dir(parent / "mine")
    assert mode(d) == 0o700
    assert mode(parent) == 0o2775


@pytest.mark.parametrize("open_mode", [0o755, 0o2775, 0o750, 0o701, 0o777])
def test_an_existing_directory_open_to_others_is_refused_and_keeps_its_mode(tmp_path: Path, open_mode: int) -> None:
    d = tmp_path / "root"
    d.mkdir()
    os.chmod(d, open_mode)
    with pytest.raises(UnsafeDirectory, match=f"open to others \\(mode {open_mode:04o}\\).*chmod 700 {d}"):
        ensure_private_dir(d)
    assert mode(d) == open_mode


def test_an_existing_private_directory_is_used_as_it_is(tmp_path: Path) -> None:
    d = tmp_path / "root"
    d.mkdir()
    os.chmod(d, 0o700)
    (d / "kept").write_text("x")
    assert ensure_private_dir(d) == d
    assert mode(d) == 0o700 and (d / "kept").read_text() == "x"


def test_an_own_subfolder_opened_after_it_was_made_is_refused_not_re_moded(tmp_path: Path) -> None:
    # the rule has no exception for dunscaith's own subfolders: someone opened it, we do not undo that
    root = ensure_private_dir(tmp_path / "root")
    sub = ensure_private_dir(root / "instances")
    os.chmod(sub, 0o755)
    with pytest.raises(UnsafeDirectory, match="open to others"):
        ensure_private_dir(sub)
    assert mode(sub) == 0o755


def test_parents_that_exist_are_left_as_they_are(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o2775)
    ensure_private_dir(shared / "a" / "b", parents=True)
    assert mode(shared) == 0o2775
    assert mode(shared / "a") == 0o700


def test_refuses_a_symlink_and_leaves_its_target_alone(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    os.chmod(tmp_path / "real", 0o755)
    (tmp_path / "root").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafeDirectory, match="symbolic link"):
        ensure_private_dir(tmp_path / "root")
    assert mode(tmp_path / "real") == 0o755


def test_refuses_a_file(tmp_path: Path) -> None:
    (tmp_path / "root").write_text("x")
    with pytest.raises(UnsafeDirectory, match="not a directory"):
        ensure_private_dir(tmp_path / "root")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory owned by someone else")
def test_refuses_a_directory_of_another_user(tmp_path: Path) -> None:
    d = tmp_path / "root"
    d.mkdir()
    os.chmod(d, 0o700)
    os.chown(d, 65534, 65534)
    with pytest.raises(UnsafeDirectory, match="owned by uid 65534"):
        ensure_private_dir(d)
    assert mode(d) == 0o700 and os.lstat(d).st_uid == 65534


def test_an_open_directory_can_be_accepted_but_is_still_never_changed(tmp_path: Path) -> None:
    d = tmp_path / "users-own"
    d.mkdir()
    os.chmod(d, 0o755)
    ensure_private_dir(d, closed_to_others=False)
    assert mode(d) == 0o755
    new = ensure_private_dir(tmp_path / "new", closed_to_others=False)
    assert mode(new) == 0o700


def test_a_record_folder_checks_every_folder_from_the_root_down_and_refuses_as_the_root_is(tmp_path: Path) -> None:
    from dunscaith.adapters.durable.private_dir import ensure_record_folder
    from dunscaith.domain.model.jobs.root_errors import RootUnsafe

    root = tmp_path / "records"
    made = ensure_record_folder(root / "slurm-queries" / "big" / "wanted", root)
    assert [stat.S_IMODE(os.stat(p).st_mode) for p in (root, made.parent.parent, made.parent, made)] == [0o700] * 4
    assert sorted(os.listdir(root)) == ["slurm-queries"]  # nothing else made beside it
    os.chmod(root / "slurm-queries", 0o755)  # an open middle folder, though the one asked for is 0700
    with pytest.raises(RootUnsafe, match=f"record root {root} cannot be used: {root / 'slurm-queries'} is open"):
        ensure_record_folder(made, root)
    assert stat.S_IMODE(os.stat(root / "slurm-queries").st_mode) == 0o755


def test_checking_a_record_folder_makes_nothing_and_refuses_an_open_existing_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    check_record_folder(root / "slurm-queries" / "hpc" / "wanted", root)
    assert not root.exists()  # an emergency stop on a host with no records leaves none
    (root / "slurm-queries").mkdir(parents=True, mode=0o700)
    os.chmod(root / "slurm-queries", 0o755)
    with pytest.raises(RootUnsafe, match="open to others"):
        check_record_folder(root / "slurm-queries" / "hpc" / "wanted", root)
    assert stat.S_IMODE(os.stat(root / "slurm-queries").st_mode) == 0o755
