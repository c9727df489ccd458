"""The record root is refused, with the setting to change, wherever its lock or its host cannot be trusted."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from dunscaith.adapters.host.fake import FakeHost
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.record_root import default_records_root, open_record_root
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.root_errors import (
    RecordRootRefused,
    RootHostFileDamaged,
    RootOfAnotherHost,
    RootOnNetworkFilesystem,
    RootUnsafe,
)
from tests.infra.tmpfs import SmallDisk

SETTING = "records.root (environment: DUNSCAITH_RECORDS__ROOT)"
LOGIN1 = FakeHost(machine_id="1" * 32, hostname="login1")
LOGIN2 = FakeHost(machine_id="2" * 32, hostname="login2")


def test_a_root_that_is_a_symlink_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    (tmp_path / "root").symlink_to(target)
    with pytest.raises(RootUnsafe) as caught:
        open_record_root(tmp_path / "root", LOGIN1)
    assert str(caught.value) == (
        f"record root {tmp_path / 'root'} cannot be used: a symbolic link; refusing to keep records through it; "
        f"set {SETTING} to a directory of your own"
    )
    assert os.listdir(target) == []


def test_a_root_owned_by_another_user_is_refused(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a directory to another user")
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    os.chown(root, 65534, 65534)
    with pytest.raises(RootUnsafe, match=r"owned by uid 65534, not by you \(uid 0\)") as caught:
        open_record_root(root, LOGIN1)
    assert SETTING in str(caught.value)
    assert not (root / "HOST").exists()


def test_a_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "root").write_text("")
    with pytest.raises(RootUnsafe, match="not a directory"):
        open_record_root(tmp_path / "root", LOGIN1)


def test_a_root_bound_to_another_host_is_refused_naming_both_hosts(tmp_path: Path) -> None:
    root = tmp_path / "root"
    open_record_root(root, LOGIN1)
    with pytest.raises(RootOfAnotherHost) as caught:
        open_record_root(root, LOGIN2)
    assert str(caught.value) == (
        f"record root {root} belongs to host login1 (machine id {'1' * 32}), and this is host login2 "
        f"(machine id {'2' * 32}); run the command on login1, or set {SETTING} to a root of this host"
    )
    assert json.loads((root / "HOST").read_text()) == {"hostname": "login1", "machine_id": "1" * 32}


def test_the_same_hostname_with_another_machine_id_is_another_host(tmp_path: Path) -> None:
    root = tmp_path / "root"
    open_record_root(root, LOGIN1)
    with pytest.raises(RootOfAnotherHost):
        open_record_root(root, FakeHost(machine_id="3" * 32, hostname="login1"))


NETWORK = ["nfs", "nfs4", "lustre", "gpfs", "beegfs", "cifs", "smb3", "ceph", "9p", "fuse.sshfs"]


@pytest.mark.parametrize("filesystem", NETWORK)
def test_a_root_on_a_network_filesystem_is_refused_naming_it_and_nothing_is_created(tmp_path: Path,
                                                                                    filesystem: str) -> None:
    root = tmp_path / "home" / "records"
    host = FakeHost(filesystems={tmp_path / "home": filesystem})
    with pytest.raises(RootOnNetworkFilesystem) as caught:
        open_record_root(root, host)
    assert str(caught.value) == (
        f"record root {root} is on a network filesystem ({filesystem}), where a job's lock cannot be trusted; "
        f"set {SETTING} to a directory on a local disk"
    )
    assert not root.exists()


def test_a_damaged_host_file_is_refused_and_not_rewritten(tmp_path: Path) -> None:
    root = tmp_path / "root"
    open_record_root(root, LOGIN1)
    (root / "HOST").write_text('{"hostname": "login1"}')
    with pytest.raises(RootHostFileDamaged, match="missing field") as caught:
        open_record_root(root, LOGIN1)
    assert SETTING in str(caught.value)
    assert (root / "HOST").read_text() == '{"hostname": "login1"}'


def test_a_host_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir(mode=0o700)
    elsewhere = tmp_path / "other-host"
    elsewhere.write_text(json.dumps({"hostname": "login1", "machine_id": "1" * 32}))
    (root / "HOST").symlink_to(elsewhere)
    with pytest.raises(RootHostFileDamaged):
        open_record_root(root, LOGIN1)


def test_every_refusal_is_a_record_root_refusal_and_the_store_passes_it_on(tmp_path: Path) -> None:
    for refusal in (RootUnsafe, RootOfAnotherHost, RootOnNetworkFilesystem, RootHostFileDamaged):
        assert issubclass(refusal, RecordRootRefused)
    root = tmp_path / "root"
    SqliteStore.open(root, LOGIN1).close()
    with pytest.raises(RootOfAnotherHost):
        SqliteStore.open(root, LOGIN2)
    with pytest.raises(RootOnNetworkFilesystem):
        SqliteStore.open(tmp_path / "nfs-root", FakeHost(default_filesystem="nfs4"))


def test_first_use_creates_a_private_root_bound_to_this_machine(tmp_path: Path) -> None:
    root = tmp_path / "deeper" / "root"
    opened = open_record_root(root, SystemHost())
    assert opened.path == root and opened.host == SystemHost().identity()
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / "HOST").st_mode) == 0o600
    assert json.loads((root / "HOST").read_text()) == {
        "hostname": opened.host.hostname, "machine_id": opened.host.machine_id}
    assert open_record_root(root, SystemHost()) == opened


def test_a_group_shared_directory_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    os.chmod(root, 0o2775)
    with pytest.raises(RootUnsafe, match=r"open to others \(mode 2775\).*chmod 700") as caught:
        open_record_root(root, LOGIN1)
    assert SETTING in str(caught.value)
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o2775
    assert os.listdir(root) == []


def test_a_private_directory_with_files_and_no_host_file_is_not_taken_over(tmp_path: Path) -> None:
    root = tmp_path / "mine"
    root.mkdir(mode=0o700)
    (root / "thesis.tex").write_text("x")
    with pytest.raises(RootUnsafe, match=r"not a record root .* no HOST file"):
        open_record_root(root, LOGIN1)
    assert os.listdir(root) == ["thesis.tex"]


def test_an_empty_private_directory_becomes_a_root(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir(mode=0o700)
    open_record_root(root, LOGIN1)
    assert (root / "HOST").exists() and stat.S_IMODE(os.stat(root).st_mode) == 0o700


def test_missing_parents_are_created_private_and_the_root_below_them(tmp_path: Path) -> None:
    root = tmp_path / "a" / "b" / "root"
    open_record_root(root, LOGIN1)
    for d in (tmp_path / "a", tmp_path / "a" / "b", root):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700


def test_the_default_root_is_under_var_tmp_named_for_the_user() -> None:
    assert str(default_records_root({"USER": "ada"})) == "/var/tmp/dunscaith-ada"
    assert default_records_root({}).name.startswith("dunscaith-")


@pytest.mark.parametrize("own", ["instances", "forwarded", "local-scheduler", "slurm-queries"])
def test_dunscaiths_own_folders_made_before_the_host_file_do_not_make_a_root_foreign(tmp_path: Path, own: str) -> None:
    root = tmp_path / "root"
    (root / own).mkdir(parents=True, mode=0o700)  # remote run, a forwarded command, stop --emergency: no store yet
    os.chmod(root, 0o700)
    open_record_root(root, LOGIN1)
    assert (root / "HOST").exists()


# --- issue 22 item 3: a bound root is read, never written, so read commands work on a full or read-only disk

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    from tests.infra.tmpfs import small_tmpfs

    with small_tmpfs(tmp_path / "disk") as disk:
        yield disk


def _staging(root: Path) -> list[str]:
    return sorted(name for name in os.listdir(root) if name.startswith(".staging."))


def test_a_bound_root_on_a_full_disk_opens_and_leaves_no_staging_file(small_disk: SmallDisk) -> None:
    root = small_disk.path / "records"
    open_record_root(root, LOGIN1)
    host_before = (root / "HOST").read_bytes()
    small_disk.fill()
    for _ in range(3):
        assert open_record_root(root, LOGIN1).host == LOGIN1.identity()
    assert _staging(root) == [] and (root / "HOST").read_bytes() == host_before


def test_a_bound_root_on_a_read_only_disk_opens(small_disk: SmallDisk) -> None:
    root = small_disk.path / "records"
    open_record_root(root, LOGIN1)
    small_disk.read_only()
    try:
        assert open_record_root(root, LOGIN1).host == LOGIN1.identity()
        with pytest.raises(RootOfAnotherHost):  # still checked: read, not skipped
            open_record_root(root, LOGIN2)
    finally:
        small_disk.read_only(False)
    assert _staging(root) == []


def test_an_unbound_root_on_a_full_disk_is_refused_in_one_line_and_leaves_no_staging_file(
        small_disk: SmallDisk) -> None:
    root = small_disk.path / "records"
    root.mkdir(mode=0o700)
    small_disk.fill()
    with pytest.raises(RootUnsafe, match=r"it has no HOST file yet, and it cannot be written \(No space left on "
                                         r"device\)"):
        open_record_root(root, LOGIN1)
    assert os.listdir(root) == []
    small_disk.free()
    assert open_record_root(root, LOGIN1).host == LOGIN1.identity()  # bound once there is room


def test_a_missing_host_file_of_a_non_empty_root_is_still_damaged_not_rebound(tmp_path: Path) -> None:
    root = tmp_path / "root"
    open_record_root(root, LOGIN1)
    (root / "HOST").write_text("")
    with pytest.raises(RootHostFileDamaged):
        open_record_root(root, LOGIN1)


def test_a_sound_store_on_a_full_disk_is_not_read_now_and_never_called_damaged(small_disk: SmallDisk) -> None:
    from dunscaith.ports.job_store import StoreError

    root = small_disk.path / "records"
    SqliteStore.open(root, LOGIN1).close()  # a clean close: SQLite removes its -wal and -shm
    small_disk.fill()
    with pytest.raises(StoreError) as caught:
        SqliteStore.open(root, LOGIN1)
    said = str(caught.value)
    assert "cannot be read now" in said and "the disk holding it is full" in said, said
    assert "damaged" not in said and "move it aside" not in said
    assert _staging(root) == []
    small_disk.free()
    SqliteStore.open(root, LOGIN1).close()  # reads again once there is room


# --- issue 38 item 3: a store read without a lock where nothing can be written -------------------------------

def test_a_store_on_a_full_disk_is_read_without_a_lock_writes_nothing_and_sees_a_writer_that_comes_back(
        small_disk: SmallDisk) -> None:
    from datetime import UTC, datetime

    from dunscaith.ports.job_store import StoreError

    root = small_disk.path / "records"
    at = datetime(2026, 1, 1, tzinfo=UTC)
    with SqliteStore.open(root, LOGIN1) as first:
        first.create(JobId("j1"), at, "job-recorded", {})
    small_disk.fill()
    before = sorted(os.listdir(root))
    reader = SqliteStore.open(root, LOGIN1, unlocked_reads=True)
    try:
        assert reader.read_unlocked == "full" and reader.jobs() == ["j1"]
        assert [e.kind for e in reader.read(JobId("j1")).events] == ["job-recorded"]
        with pytest.raises(StoreError, match="nothing can be recorded now: the record root's disk is full"):
            reader.append(JobId("j1"), at, "note", {})
        with pytest.raises(StoreError, match="the lock of job j1 cannot be taken now"), reader.lock(JobId("j1")):
            pass
        assert sorted(os.listdir(root)) == before  # no -wal, no -shm, no lock file
        small_disk.free()
        with SqliteStore.open(root, LOGIN1) as writer:  # room again: a writer, its -shm kept while it is open
            writer.create(JobId("j2"), at, "job-recorded", {})
            assert reader.jobs() == ["j1", "j2"] and reader.read(JobId("j2")).events
    finally:
        reader.close()
