"""Pure pieces of the host and store adapters: mountinfo, machine ids, filesystem verdicts, lock names, event codec."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from dunscaith.adapters.host.fake import FakeHost
from dunscaith.adapters.host.system import SystemHost, fstype_of, nearest_existing, read_machine_id
from dunscaith.adapters.store.event_codec import decode_data, decode_time, encode_data, encode_time
from dunscaith.adapters.store.sqlite.locks import lock_file_name
from dunscaith.domain.model.jobs.filesystem import classify_filesystem
from dunscaith.domain.model.jobs.ids import JobId

MOUNTINFO = "\n".join([
    "22 27 0:21 / /proc rw,relatime - proc proc rw",
    "27 1 253:0 / / rw,relatime - ext4 /dev/vda1 rw",
    "40 27 0:50 / /home rw,relatime - nfs4 fs1:/export/home rw,vers=4.2",
    "41 40 0:51 / /home/ada/scratch rw - lustre 10.0.0.1@tcp:/scratch rw",
    "42 27 0:52 / /var/tmp rw - tmpfs tmpfs rw",
    "43 27 0:53 / /mnt/with\\040space rw - fuse.sshfs ada@host: rw",
    "44 42 0:54 / /var/tmp rw - beegfs beegfs_nodev rw",  # mounted over the tmpfs: the later one wins
    "garbage line without separator",
])


@pytest.mark.parametrize(
    ("path", "fstype"),
    [
        ("/", "ext4"),
        ("/usr/lib", "ext4"),
        ("/home", "nfs4"),
        ("/home/ada/.config", "nfs4"),
        ("/home/ada/scratch/run", "lustre"),
        ("/home/ada/scratchy", "nfs4"),  # a prefix of the name is not the mount point
        ("/mnt/with space/x", "fuse.sshfs"),
        ("/var/tmp/dunscaith-ada", "beegfs"),
        ("/proc/self", "proc"),
    ],
)
def test_the_mount_that_holds_a_path_gives_its_filesystem(path: str, fstype: str) -> None:
    assert fstype_of(path, MOUNTINFO) == fstype


@pytest.mark.parametrize(
    ("name", "network"),
    [("nfs", True), ("NFS4", True), ("lustre", True), ("gpfs", True), ("beegfs", True), ("cifs", True),
     ("smb3", True), ("ceph", True), ("fuse.sshfs", True), ("9p", True), ("ext4", False), ("xfs", False),
     ("btrfs", False), ("tmpfs", False), ("autofs", True), ("overlay", False), ("zfs", False), ("unknown", False)],
)
def test_network_filesystems_are_recognised_by_name(name: str, network: bool) -> None:
    assert classify_filesystem(name).is_network is network


def test_the_real_host_reads_its_own_mounts(tmp_path: Path) -> None:
    host = SystemHost(mountinfo=tmp_path / "mountinfo")
    (tmp_path / "mountinfo").write_text(MOUNTINFO)
    assert host.filesystem(Path("/home/ada/not/yet/made")).name == "nfs4"
    assert host.filesystem(Path("/home/ada")).is_network
    assert SystemHost(mountinfo=tmp_path / "absent").filesystem(Path("/")).name == "unknown"


def test_nearest_existing_climbs_to_a_parent_that_exists(tmp_path: Path) -> None:
    assert nearest_existing(tmp_path / "a" / "b" / "c") == tmp_path


def test_the_machine_id_is_the_first_well_formed_one(tmp_path: Path) -> None:
    bad, good, other = tmp_path / "bad", tmp_path / "good", tmp_path / "other"
    bad.write_text("not-an-id\n")
    good.write_text("ABCDEF0123456789abcdef0123456789\n")
    other.write_text("f" * 32)
    assert read_machine_id((tmp_path / "absent", bad, good, other)) == "abcdef0123456789abcdef0123456789"
    assert read_machine_id((tmp_path / "absent",)) == ""


def test_the_fake_host_answers_for_the_longest_matching_prefix() -> None:
    host = FakeHost(filesystems={Path("/home"): "nfs4", Path("/home/ada/local"): "ext4"})
    assert host.filesystem(Path("/home/ada")).name == "nfs4"
    assert host.filesystem(Path("/home/ada/local/x")).name == "ext4"
    assert host.filesystem(Path("/var/tmp")).name == "ext4"


@pytest.mark.parametrize(
    ("job", "name"),
    [("analysis-1", "job-analysis-1.lock"), ("a/b", "job-a%2Fb.lock"), ("..", "job-...lock"),
     ("x y", "job-x%20y.lock")],
)
def test_a_lock_file_name_never_contains_a_slash(job: str, name: str) -> None:
    assert lock_file_name(JobId(job)) == name


def test_a_very_long_job_name_gets_a_bounded_lock_file_name() -> None:
    name = lock_file_name(JobId("x" * 1000))
    assert len(name) < 100 and name != lock_file_name(JobId("x" * 999))


def test_event_times_are_fixed_width_utc_and_refuse_a_time_without_zone() -> None:
    at = datetime(2026, 1, 1, 13, 0, tzinfo=timezone(timedelta(hours=1)))
    assert encode_time(at) == "2026-01-01T12:00:00.000000+00:00"
    assert decode_time(encode_time(at)) == at
    with pytest.raises(ValueError, match="no time zone"):
        encode_time(datetime(2026, 1, 1))
    assert decode_time(encode_time(datetime(2026, 1, 1, tzinfo=UTC))).tzinfo == UTC


@pytest.mark.parametrize("data", [[1], "text", None])
def test_event_data_must_be_a_mapping(data: list[int] | str | None) -> None:
    with pytest.raises(TypeError):
        encode_data(data)  # type: ignore[arg-type]  # what a caller may hand it all the same


def test_event_data_is_canonical_json_and_reads_back() -> None:
    assert encode_data({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    assert decode_data('{"a":"é","b":1}') == {"a": "é", "b": 1}
    with pytest.raises(ValueError):
        decode_data("[1]")
