import os
import stat

import pytest

from adapters.durable.private_dir import UnsafeDirectory, ensure_private_dir


def test_creates_a_0700_directory(tmp_path):
    d = ensure_private_dir(tmp_path / "root")
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_tightens_a_directory_open_to_others(tmp_path):
    d = tmp_path / "root"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    ensure_private_dir(d)
    assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_refuses_a_symlink(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "root").symlink_to(tmp_path / "real")
    with pytest.raises(UnsafeDirectory, match="symbolic link"):
        ensure_private_dir(tmp_path / "root")


def test_refuses_a_file(tmp_path):
    (tmp_path / "root").write_text("x")
    with pytest.raises(UnsafeDirectory):
        ensure_private_dir(tmp_path / "root")


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a directory owned by someone else")
def test_refuses_a_directory_of_another_user(tmp_path):
    d = tmp_path / "root"
    d.mkdir()
    os.chown(d, 65534, 65534)
    with pytest.raises(UnsafeDirectory, match="owned by uid 65534"):
        ensure_private_dir(d)


def test_an_existing_directory_keeps_its_mode_when_not_tightened(tmp_path):
    d = tmp_path / "users-own"
    d.mkdir()
    os.chmod(d, 0o755)
    ensure_private_dir(d, tighten=False)
    assert stat.S_IMODE(d.stat().st_mode) == 0o755
    new = ensure_private_dir(tmp_path / "new", tighten=False)
    assert stat.S_IMODE(new.stat().st_mode) == 0o700
