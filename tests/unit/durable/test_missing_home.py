"""Issue 38: a missing home folder is never made, nor any folder above it (``HOME=/nonexistent/home
dunscaith list`` made ``/nonexistent``, 0755); dunscaith's own folders are made inside an existing one only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dunscaith.adapters.durable.config_dir import config_home, ensure_dunscaith_dir
from dunscaith.adapters.durable.private_dir import MissingHome, UnsafeDirectory, ensure_private_dir, make_missing_dirs


@pytest.fixture
def gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder that does not exist, two levels below the test's own folder."""
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent" / "home"))
    return tmp_path / "nonexistent"


def test_the_pointer_folders_are_refused_and_nothing_is_made(gone: Path) -> None:
    with pytest.raises(MissingHome, match=f"the home folder {gone / 'home'} does not exist"):
        ensure_dunscaith_dir(config_home() / "dunscaith" / "jobs")
    assert not gone.exists()
    assert issubclass(MissingHome, UnsafeDirectory)  # every caller already refuses it in one line


def test_a_private_folder_with_parents_under_a_missing_home_is_refused(gone: Path) -> None:
    with pytest.raises(MissingHome):
        ensure_private_dir(gone / "home" / ".local" / "share" / "qdevices" / "records", parents=True)
    with pytest.raises(MissingHome):
        make_missing_dirs(gone / "home" / ".cache")
    assert not gone.exists()


def test_a_folder_elsewhere_is_still_made_without_a_home(gone: Path, tmp_path: Path) -> None:
    made = ensure_private_dir(tmp_path / "records" / "site", parents=True)
    assert made.is_dir() and not gone.exists()


def test_inside_an_existing_home_the_folders_are_made_as_before(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    monkeypatch.setenv("HOME", str(home))
    jobs = ensure_dunscaith_dir(config_home() / "dunscaith" / "jobs")
    assert jobs == home / ".config" / "dunscaith" / "jobs" and jobs.is_dir()
    assert oct(os.stat(jobs).st_mode & 0o777) == oct(0o700)
    assert oct(os.stat(home).st_mode & 0o777) == oct(0o755)  # the home itself is never changed


def test_the_settings_cache_is_skipped_silently_without_a_home(gone: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings
    from dunscaith.entrypoints.dunscaith.root.settings_cache import remember

    remember("key", DunscaithSettings())
    assert not gone.exists() and capsys.readouterr().err == ""


def test_no_home_known_at_all_makes_folders_elsewhere_and_refuses_the_commands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No HOME and a uid the password database does not know (a container's): the folder maker has no home
    to keep and goes on; the commands refuse in one line."""
    import pwd

    from dunscaith.entrypoints.cli_support import BadInput, home_missing

    def unknown(uid: int) -> pwd.struct_passwd:
        raise KeyError(uid)

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    assert ensure_private_dir(tmp_path / "a" / "b", parents=True).is_dir()
    with pytest.raises(BadInput, match="HOME is not set and uid"):
        home_missing(["list"])
    home_missing(["list", "--help"])  # a request for help is answered all the same
