"""JsonlRecordStore on real files: synced lines, modes, torn tails, damage, symlinks, older decisions."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dunscaith.adapters.run_records.jsonl import JsonlRecordStore
from dunscaith.domain.model.qdevices.decisions import make_decision
from dunscaith.domain.model.qdevices.lines import APP, FORMAT, LineType, make
from dunscaith.domain.model.qdevices.orders import OrderState, fold
from dunscaith.domain.model.qdevices.resolve import Decision, Option
from dunscaith.ports.run_record import RecordUnreadable

T = datetime(2026, 1, 1, tzinfo=UTC)


def start() -> object:
    return make(LineType.START, T, app=APP, format=FORMAT, site="mqss", site_device="Q5", run="r", manifest="/m",
                host="h", path="", device=0, inode=0, pid=1, orders=["a", "b"], resume=False, job_seconds_limit=60)


def new_record(tmp_path: Path) -> tuple[JsonlRecordStore, str]:
    store = JsonlRecordStore(tmp_path / "records", "h")
    appender = store.create("mqss", "r", start())  # type: ignore[arg-type]
    appender.append(make(LineType.SUBMITTING, T, order=1, name="a"))
    appender.close()
    return store, appender.path


def test_the_start_line_carries_the_files_identity(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    read = store.read(path)
    view = fold(read.lines)
    st = os.stat(path)
    assert (view.host, view.path, view.device, view.inode) == ("h", path, st.st_dev, st.st_ino)
    assert read.actual.inode == st.st_ino


def test_records_are_0600_in_0700_folders(tmp_path: Path) -> None:
    _, path = new_record(tmp_path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(Path(path).parent).st_mode) == 0o700


def test_a_torn_last_line_is_reported_and_the_rest_reads(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    with open(path, "ab") as f:
        f.write(b'{"type":"submitted","order":1,"jo')
    read = store.read(path)
    assert read.torn_tail and [line.type for line in read.lines] == [LineType.START, LineType.SUBMITTING]
    assert fold(read.lines).order(1).state is OrderState.LOST


def test_appending_after_a_torn_line_marks_it_and_the_record_reads_again(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    with open(path, "ab") as f:
        f.write(b'{"type":"subm')
    appender = store.open_append(path)
    appender.append(make(LineType.SUBMITTED, T, order=1, job="j1"))
    appender.close()
    read = store.read(path)
    assert not read.torn_tail
    assert [line.type for line in read.lines] == [LineType.START, LineType.SUBMITTING, LineType.SUBMITTED]
    assert b'"type":"torn"' in Path(path).read_bytes()


def test_a_damaged_line_in_the_middle_refuses_the_record_naming_the_line(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    data = Path(path).read_bytes().split(b"\n")
    data[1] = b"garbage"
    Path(path).write_bytes(b"\n".join(data) + b'{"type":"torn","at":"2026-01-01T00:00:00+00:00","bytes":1}\n'
                           .replace(b"torn", b"nope"))
    with pytest.raises(RecordUnreadable, match="line 2 is damaged"):
        store.read(path)


@pytest.mark.parametrize(("content", "message"), [
    (b"", "empty"),
    (b'{"type":"submitting","at":"2026-01-01T00:00:00+00:00","order":1,"name":"a"}\n', "start line"),
    (b"\x00\x01\n\x02\n", "damaged"),
])
def test_a_file_that_is_no_record_is_refused(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content)
    with pytest.raises(RecordUnreadable, match=message):
        JsonlRecordStore(tmp_path, "h").read(str(path))


def test_a_record_is_never_read_through_a_symlink(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    link = tmp_path / "link.jsonl"
    link.symlink_to(path)
    with pytest.raises(RecordUnreadable):
        store.read(str(link))


def test_site_records_lists_the_records_folder_and_older_records(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    older = tmp_path / "older"
    older.mkdir()
    (older / "x.jsonl").write_bytes(Path(path).read_bytes())
    missing = str(tmp_path / "missing.jsonl")
    found = store.site_records("mqss", [str(older), missing])
    assert found == [path, str(older / "x.jsonl"), missing]
    assert store.is_in_records_folder(path) and not store.is_in_records_folder(str(older / "x.jsonl"))


def test_newest_in_run_folder(tmp_path: Path) -> None:
    store, first = new_record(tmp_path)
    later = make(LineType.START, datetime(2026, 2, 1, tzinfo=UTC), **{**start().data})  # type: ignore[attr-defined]
    second = store.create("mqss", "r", later)
    second.close()
    assert not store.is_newest_in_run_folder(first) and store.is_newest_in_run_folder(second.path)


def test_older_decisions_are_synced_lines_read_back(tmp_path: Path) -> None:
    store, path = new_record(tmp_path)
    order = fold(store.read(path).lines).order(1)
    decision = make_decision(path, order, Decision(Option.NONE, None, True, False), T)
    store.add_older_decision("mqss", decision)
    assert store.older_decisions("mqss") == [decision]
    assert stat.S_IMODE(os.stat(tmp_path / "records" / "mqss" / "older_decisions.jsonl").st_mode) == 0o600
    assert path in store.site_records("mqss", []) and len(store.site_records("mqss", [])) == 1


def test_a_records_folder_reached_through_a_symlink_is_the_same_record_not_a_copy(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "linked").symlink_to(real)
    store = JsonlRecordStore(tmp_path / "linked" / "records", "h")
    appender = store.create("mqss", "r", start())  # type: ignore[arg-type]
    appender.close()
    via_link = str(tmp_path / "linked" / "records" / "mqss" / "r" / Path(appender.path).name)
    read = store.read(via_link)
    view = fold(read.lines)
    from dunscaith.domain.model.qdevices.identity import RecordIdentity

    assert RecordIdentity(view.host, view.path, view.device, view.inode).mismatch(read.actual) is None
    assert store.is_in_records_folder(via_link) and store.is_newest_in_run_folder(read.path)
