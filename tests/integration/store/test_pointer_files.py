"""Pointer files on disk: private, whole, and a damaged one reported rather than crashing a command."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dunscaith.adapters.durable.publish import STAGING_PREFIX
from dunscaith.adapters.pointers.files import FilePointers, default_pointer_dir
from dunscaith.adapters.pointers.memory import InMemoryPointers
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import BadPointerName, DamagedPointer, NoPointer, Pointer, encode_pointer
from dunscaith.domain.model.jobs.record import HostIdentity
from tests.expect import present

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _pointer(job: str = "analysis-1", state: str = "running") -> Pointer:
    return Pointer(
        job=JobId(job),
        host="login1",
        record_root="/var/tmp/dunscaith-ada",
        root_host=HostIdentity(machine_id="a" * 32, hostname="login1"),
        binary="/opt/dunscaith/bin/dunscaith",
        cluster="local",
        adapter="local",
        state=state,
        state_at=T0,
        supervised_at=None,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".config"


@pytest.fixture
def pointers(config: Path) -> FilePointers:
    return FilePointers(config / "dunscaith" / "jobs")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_missing_pointer_is_no_pointer(pointers: FilePointers) -> None:
    with pytest.raises(NoPointer, match="no pointer for job analysis-1"):
        pointers.read(JobId("analysis-1"))
    assert pointers.all() == []


def test_a_damaged_pointer_is_reported_by_read_and_listed_by_all(pointers: FilePointers) -> None:
    pointers.write(_pointer("good"))
    (pointers.directory / "bad").write_text('{"version": 1, "job": "bad"')
    with pytest.raises(DamagedPointer, match="pointer of job bad is damaged"):
        pointers.read(JobId("bad"))
    readings = {r.job: r for r in pointers.all()}
    good, bad = readings[JobId("good")], readings[JobId("bad")]
    assert good.pointer == _pointer("good") and good.problem is None
    assert bad.pointer is None and "damaged" in present(bad.problem)


def test_a_pointer_that_is_a_symlink_or_a_directory_is_damaged_and_not_followed(pointers: FilePointers,
                                                                                tmp_path: Path) -> None:
    pointers.write(_pointer("real"))
    target = tmp_path / "elsewhere"
    target.write_bytes(encode_pointer(_pointer("linked")))
    (pointers.directory / "linked").symlink_to(target)
    (pointers.directory / "dir").mkdir()
    with pytest.raises(DamagedPointer, match="symbolic link"):
        pointers.read(JobId("linked"))
    with pytest.raises(DamagedPointer, match="not a regular file"):
        pointers.read(JobId("dir"))


def test_a_pointer_owned_by_someone_else_is_damaged(pointers: FilePointers) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    pointers.write(_pointer())
    os.chown(pointers.directory / "analysis-1", 65534, 65534)
    with pytest.raises(DamagedPointer, match="owned by uid 65534"):
        pointers.read(JobId("analysis-1"))


def test_a_job_name_that_is_not_a_file_name_is_refused_before_anything_is_written(pointers: FilePointers) -> None:
    with pytest.raises(BadPointerName):
        pointers.write(_pointer("../escape"))
    assert not (pointers.directory.parent / "escape").exists()


def test_pointers_are_0600_in_0700_directories_and_the_config_home_is_left_alone(pointers: FilePointers,
                                                                                 config: Path) -> None:
    config.mkdir(parents=True, mode=0o755)
    os.chmod(config, 0o755)
    pointers.write(_pointer())
    assert _mode(pointers.directory / "analysis-1") == 0o600
    assert _mode(pointers.directory) == 0o700
    assert _mode(pointers.directory.parent) == 0o700
    assert _mode(config) == 0o755


def test_a_rewrite_replaces_the_pointer_whole_and_leaves_no_staging_file(pointers: FilePointers) -> None:
    pointers.write(_pointer(state="submitting"))
    later = _pointer(state="running").with_supervised(T0 + timedelta(minutes=5))
    pointers.write(later)
    assert pointers.read(JobId("analysis-1")) == later
    assert sorted(os.listdir(pointers.directory)) == [".unsettled", "analysis-1"]  # the index, beside
    assert os.listdir(pointers.index_dir) == ["analysis-1"]  # no staging file left there either


def test_all_skips_staging_files_of_a_writer_that_died(pointers: FilePointers) -> None:
    pointers.write(_pointer())
    (pointers.directory / ".staging.other.123.abc").write_text("half")
    assert [r.job for r in pointers.all()] == ["analysis-1"]


def test_remove_forgets_a_pointer_and_tolerates_a_missing_one(pointers: FilePointers) -> None:
    pointers.write(_pointer())
    pointers.remove(JobId("analysis-1"))
    pointers.remove(JobId("analysis-1"))
    assert pointers.all() == []


def test_pointers_live_under_the_xdg_config_home_when_it_is_set(tmp_path: Path) -> None:
    assert default_pointer_dir({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "dunscaith" / "jobs"
    assert default_pointer_dir({"XDG_CONFIG_HOME": "relative"}).parts[-3:] == (".config", "dunscaith", "jobs")


@pytest.mark.parametrize("kind", ["files", "memory"])
def test_both_pointer_stores_keep_the_last_write_of_each_job(kind: str, pointers: FilePointers) -> None:
    store = pointers if kind == "files" else InMemoryPointers()
    with pytest.raises(NoPointer):
        store.read(JobId("b-job"))
    store.write(_pointer("b-job", state="submitting"))
    store.write(_pointer("a-job"))
    store.write(_pointer("b-job", state="running"))
    assert store.read(JobId("b-job")).state == "running"
    assert [(r.job, present(r.pointer).state) for r in store.all()] == [("a-job", "running"), ("b-job", "running")]
    store.remove(JobId("a-job"))
    assert [r.job for r in store.all()] == ["b-job"]
    with pytest.raises(BadPointerName):
        store.write(_pointer(".hidden"))


def test_a_config_folder_the_user_made_keeps_its_mode_and_the_pointers_folder_is_private(tmp_path: Path) -> None:
    import os
    import stat

    from dunscaith.adapters.durable.config_dir import ensure_dunscaith_dir

    base = tmp_path / ".config" / "dunscaith"
    base.mkdir(parents=True)
    os.chmod(base, 0o755)  # mkdir -p ~/.config/dunscaith, to write config.toml
    jobs = ensure_dunscaith_dir(base / "jobs")
    assert stat.S_IMODE(os.stat(base).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(jobs).st_mode) == 0o700


# --- the index of pointers not settled, on disk -----------------------------------------------------------

def test_the_index_is_a_private_folder_beside_the_pointers_that_all_passes_over(pointers: FilePointers) -> None:
    pointers.write(_pointer("a", "running"))
    assert _mode(pointers.index_dir) == 0o700 and _mode(pointers.index_dir / "a") == 0o600
    assert [r.job for r in pointers.all()] == ["a"]  # .unsettled is no pointer, nor damaged
    pointers.index_built()
    (pointers.index_dir / ".staging.a.123.abc").write_text("half")
    assert pointers.indexed() == ["a"]


def test_a_damaged_index_entry_has_no_owner(pointers: FilePointers) -> None:
    pointers.write(_pointer("a", "running"))
    (pointers.index_dir / "a").write_text("garbage")
    entry = pointers.index_entry(JobId("a"))
    assert entry is not None and entry.owner is None


class _Crash(Exception):
    pass


def _crashing_at(directory: Path, point: str) -> FilePointers:
    def checkpoint(step: str) -> None:
        if step == point:
            raise _Crash(step)

    return FilePointers(directory, checkpoint=checkpoint)


def test_a_crash_between_the_entry_and_the_pointer_leaves_the_entry_and_the_older_pointer(
        pointers: FilePointers) -> None:
    pointers.index_built()
    crashing = _crashing_at(pointers.directory, "pointer-indexed")
    with pytest.raises(_Crash):
        crashing.write(_pointer("a", "submitting"))
    assert pointers.indexed() == ["a"]
    with pytest.raises(NoPointer):  # the entry came first: at worst an entry too many
        pointers.read(JobId("a"))


def test_a_crash_between_a_settled_pointer_and_its_entry_s_removal_leaves_a_stale_entry(pointers: FilePointers) -> None:
    pointers.index_built()
    pointers.write(_pointer("a", "running"))
    crashing = _crashing_at(pointers.directory, "pointer-settled")
    with pytest.raises(_Crash):
        crashing.write(_pointer("a", "succeeded"))
    assert pointers.read(JobId("a")).state == "succeeded" and pointers.indexed() == ["a"]


def test_a_crash_in_a_batch_between_its_entries_and_its_pointers_leaves_every_entry_and_no_pointer(
        pointers: FilePointers) -> None:
    pointers.index_built()
    crashing = _crashing_at(pointers.directory, "pointer-indexed")
    with pytest.raises(_Crash):
        crashing.write_many([_pointer("s-1", "submitting"), _pointer("s-2", "submitting")])
    assert pointers.indexed() == ["s-1", "s-2"]  # at worst entries too many, never a pointer without one
    assert pointers.all() == []  # a killed writer's staging files are never read as pointers


def test_a_batch_syncs_its_files_once_not_once_each(pointers: FilePointers, monkeypatch: pytest.MonkeyPatch) -> None:
    import dunscaith.adapters.durable.publish as publish

    synced: list[str] = []
    monkeypatch.setattr(publish, "sync_files", lambda directory, paths: synced.append(f"{len(paths)} files"))
    pointers.index_built()
    pointers.write_many([_pointer(f"s-{i}", "submitting") for i in range(1, 51)])
    assert synced == ["100 files"]  # 50 entries and 50 pointers, one sync for all
    assert pointers.indexed() == sorted(f"s-{i}" for i in range(1, 51))
    assert [p.name for p in pointers.directory.iterdir() if p.name.startswith(STAGING_PREFIX)] == []
