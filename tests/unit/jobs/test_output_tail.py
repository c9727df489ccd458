"""``logs --tail N``: the last N lines as ``tail -n`` gives them, read from the end of the file."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.progress.output_files import tail


def test_the_last_lines_and_the_size(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_bytes(b"a\nb\nc\n")
    assert tail(str(f), 2) == (b"b\nc\n", 6)
    assert tail(str(f), 10) == (b"a\nb\nc\n", 6)
    assert tail(str(f), 0) == (b"", 6)


def test_a_last_line_without_its_newline_counts(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_bytes(b"a\nb\nc")
    assert tail(str(f), 1) == (b"c", 5)
    assert tail(str(f), 2) == (b"b\nc", 5)


def test_read_a_block_at_a_time(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    last, size = tail(str(f), 3, block=7)
    assert last == b"line 997\nline 998\nline 999\n"
    assert size == f.stat().st_size
    assert tail(str(f), 1000, block=5)[0] == f.read_bytes()


def test_an_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_bytes(b"")
    assert tail(str(f), 3) == (b"", 0)


def test_a_limit_reads_no_more_than_the_file_s_last_bytes(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    last, size = tail(str(f), 10, block=7, limit=20)
    assert last == b"line 998\nline 999\n" and size == f.stat().st_size  # "7\n", the end of a line cut there: dropped
    assert tail(str(f), 2, limit=10_000) == (b"line 998\nline 999\n", size)  # the limit not reached


def test_one_line_longer_than_the_limit_gives_its_end(tmp_path: Path) -> None:
    f = tmp_path / "out"
    f.write_bytes(b"x" * 100_000 + b"end\n")
    assert tail(str(f), 10, limit=8) == (b"xxxxend\n", 100_004)
