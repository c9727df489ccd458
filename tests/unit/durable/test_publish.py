import os
import stat
from pathlib import Path

import pytest

from dunscaith.adapters.durable.publish import STAGING_PREFIX, publish, replace, write_synced


def test_publish_puts_the_whole_file_under_its_final_name(tmp_path: Path) -> None:
    assert publish(tmp_path, "outcome.json", b'{"a":1}\n') is True
    assert (tmp_path / "outcome.json").read_bytes() == b'{"a":1}\n'
    assert stat.S_IMODE((tmp_path / "outcome.json").stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["outcome.json"]


def test_an_existing_final_name_is_the_answer_not_an_error(tmp_path: Path) -> None:
    assert publish(tmp_path, "x.json", b"first\n")
    assert publish(tmp_path, "x.json", b"second\n") is False
    assert (tmp_path / "x.json").read_bytes() == b"first\n"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_a_staging_file_left_by_a_dead_writer_never_blocks_another(tmp_path: Path) -> None:
    (tmp_path / f"{STAGING_PREFIX}x.json.1.deadbeef0000").write_bytes(b"half")
    assert publish(tmp_path, "x.json", b"whole\n")
    assert (tmp_path / "x.json").read_bytes() == b"whole\n"


def test_write_synced_never_follows_a_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError):
        write_synced(tmp_path / "link", b"x")
    assert not target.exists()


def test_replace_swaps_the_whole_file(tmp_path: Path) -> None:
    replace(tmp_path, "pointer", b"one\n")
    replace(tmp_path, "pointer", b"two\n")
    assert (tmp_path / "pointer").read_bytes() == b"two\n"
    assert sorted(os.listdir(tmp_path)) == ["pointer"]


def test_a_replace_whose_name_need_not_last_syncs_the_bytes_and_not_the_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pointer's supervised-at refresh: after a power loss the older version or the new one, whole."""
    from dunscaith.adapters.durable import publish as module

    synced: list[str] = []
    monkeypatch.setattr(module, "sync_fd", lambda fd: synced.append("bytes"))
    monkeypatch.setattr(module, "sync_dir", lambda path: synced.append("folder"))
    replace(tmp_path, "pointer", b"one\n")
    assert synced == ["bytes", "folder"]
    synced.clear()
    replace(tmp_path, "pointer", b"two\n", durable_name=False)
    assert synced == ["bytes"]
    assert (tmp_path / "pointer").read_bytes() == b"two\n" and sorted(os.listdir(tmp_path)) == ["pointer"]


@pytest.mark.parametrize("write", ["publish", "replace"])
def test_a_write_that_fails_leaves_no_staging_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write: str) -> None:
    """Issue 22: a full disk left a 0-byte ``.staging.NAME.*`` for every try."""
    import errno

    from dunscaith.adapters.durable import publish as module

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(module, "sync_fd", full)  # the write's last step, as a full disk fails it
    with pytest.raises(OSError, match="No space left"):
        (publish if write == "publish" else replace)(tmp_path, "x.json", b"{}")
    assert os.listdir(tmp_path) == []
