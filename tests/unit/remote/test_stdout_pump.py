"""The wrapper's pump, both ways (tee and splice; read and write), on real pipes, files, /dev/null and
sockets: the bytes unchanged, every one counted and digested, the draining going on after the reader left."""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from blake3 import blake3

from dunscaith.adapters.process import pipe_tee, stdout_pump
from dunscaith.adapters.process.digest_ring import SLOTS, DigestRing
from dunscaith.adapters.process.stdout_pump import Pumped, pump

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="tee(2) and splice(2) are Linux's")
DATA = os.urandom((9 << 20) + 12345)  # more chunks than the ring has buffers, and a short last one
assert len(DATA) > SLOTS << 20


def _writer(data: bytes) -> tuple[int, threading.Thread]:
    r, w = os.pipe()

    def write() -> None:
        with os.fdopen(w, "wb") as f:
            for start in range(0, len(data), 300_001):  # odd sizes: reads come back short
                f.write(data[start:start + 300_001])
                f.flush()

    thread = threading.Thread(target=write)
    thread.start()
    return r, thread


def _pumped_into(out: int, data: bytes = DATA, how: Callable[[int, int], Pumped] = pump) -> Pumped:
    source, thread = _writer(data)
    try:
        return how(source, out)
    finally:
        thread.join()
        os.close(source)


def _reading(fd: int) -> tuple[list[bytes], threading.Thread]:
    got: list[bytes] = []

    def read() -> None:
        try:
            while chunk := os.read(fd, 1 << 16):
                got.append(chunk)
        except OSError as exc:  # a terminal's master once its slave is closed
            if exc.errno != errno.EIO:
                raise

    thread = threading.Thread(target=read)
    thread.start()
    return got, thread


def _expect(pumped: Pumped, data: bytes = DATA, gone: bool = False) -> None:
    assert (pumped.count, pumped.digest, pumped.reader_gone) == (len(data), "blake3:" + blake3(data).hexdigest(), gone)


@pytest.fixture(params=["tee", "copy"])
def how(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int, int], Pumped]]:
    if request.param == "tee" and not sys.platform.startswith("linux"):
        pytest.skip("tee(2) is Linux's")
    if request.param == "copy":  # the pump as it runs where there is no tee(2) (macOS): read into the ring, write
        monkeypatch.setattr(stdout_pump, "tee_for", lambda source, out: None)
    yield pump


def test_into_a_pipe_the_bytes_arrive_unchanged_counted_and_digested(how: Callable[[int, int], Pumped]) -> None:
    r, w = os.pipe()
    got, reader = _reading(r)
    pumped = _pumped_into(w, how=how)
    os.close(w)
    reader.join()
    os.close(r)
    assert b"".join(got) == DATA
    _expect(pumped)


def test_a_reader_that_goes_away_is_drained_to_the_end(how: Callable[[int, int], Pumped]) -> None:
    r, w = os.pipe()
    first = threading.Thread(target=lambda: (os.read(r, 100), os.close(r)))  # type: ignore[func-returns-value]
    first.start()
    pumped = _pumped_into(w, how=how)
    first.join()
    os.close(w)
    _expect(pumped, gone=True)


@linux_only
def test_the_way_is_chosen_by_what_stdout_is(tmp_path: Path) -> None:
    # tee and splice from a pipe into a pipe only: Linux refuses splice into an O_APPEND file, and
    # onto /dev/null a write costs nothing, so the reading way is the cheaper one there
    r, w = os.pipe()
    null = os.open(os.devnull, os.O_WRONLY)
    file = os.open(tmp_path / "out", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    a, b = socket.socketpair()
    try:
        assert pipe_tee.tee_for(r, w) is not None
        assert pipe_tee.tee_for(r, null) is None and pipe_tee.tee_for(r, file) is None
        assert pipe_tee.tee_for(r, a.fileno()) is None and pipe_tee.tee_for(file, w) is None
    finally:
        for fd in (r, w, null, file):
            os.close(fd)
        a.close()
        b.close()


def test_onto_dev_null_everything_is_counted_and_digested(how: Callable[[int, int], Pumped]) -> None:
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        _expect(_pumped_into(null, how=how))
    finally:
        os.close(null)


def test_a_reader_closed_before_the_first_byte_still_gets_everything_counted(
        how: Callable[[int, int], Pumped]) -> None:
    r, w = os.pipe()
    os.close(r)
    try:
        _expect(_pumped_into(w, how=how), gone=True)
    finally:
        os.close(w)


def test_onto_an_append_only_file_as_the_local_scheduler_opens_it(tmp_path: Path) -> None:
    # the local scheduler's stdout: O_APPEND, after what an earlier attempt wrote; 16 MiB, final line
    # without a newline; the file grows by exactly the worker's bytes
    data = os.urandom(16 << 20) + b"\nthe last line, no newline"  # 64 MiB by a real worker: tests/e2e/remote
    (tmp_path / "out").write_bytes(b"earlier\n")
    fd = os.open(tmp_path / "out", os.O_WRONLY | os.O_APPEND)
    try:
        _expect(_pumped_into(fd, data), data)
    finally:
        os.close(fd)
    assert (tmp_path / "out").read_bytes() == b"earlier\n" + data


def test_onto_a_terminal_the_bytes_arrive_unchanged() -> None:
    import tty  # a raw terminal: no newline translation, so the bytes read back are the bytes written

    master, slave = os.openpty()
    tty.setraw(slave)
    got, reader = _reading(master)
    data = DATA[:3 << 20] + b"\nlast line, no newline"
    try:
        pumped = _pumped_into(slave, data)
    finally:
        os.close(slave)  # the reader's end of file (EIO on Linux's master: read as the end)
    reader.join()
    os.close(master)
    assert b"".join(got) == data
    _expect(pumped, data)


def test_the_ring_hashes_every_buffer_in_order_and_reuses_none_too_early() -> None:
    ring = DigestRing(slots=2, size=4096)
    pieces = [os.urandom(4096)[:4096 - i] for i in range(50)]
    for piece in pieces:
        view = ring.take()
        view[:len(piece)] = piece
        ring.hash(len(piece))
    assert ring.digest() == "blake3:" + blake3(b"".join(pieces)).hexdigest()


def test_into_a_file_and_a_socket_the_copying_way_forwards_unchanged(tmp_path: Path) -> None:
    with open(tmp_path / "out", "wb") as f:
        _expect(_pumped_into(f.fileno()))
    assert (tmp_path / "out").read_bytes() == DATA
    a, b = socket.socketpair()
    got, reader = _reading(b.fileno())
    pumped = _pumped_into(a.fileno())
    a.shutdown(socket.SHUT_WR)
    reader.join()
    a.close()
    b.close()
    assert b"".join(got) == DATA
    _expect(pumped)


@linux_only
def test_a_stdout_that_refuses_splice_midway_gets_the_rest_copied(monkeypatch: pytest.MonkeyPatch) -> None:
    real = os.splice
    calls = [0]

    def splice_then_refuse(src: int, dst: int, count: int, *args: object) -> int:
        calls[0] += 1
        if calls[0] > 3:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(src, dst, min(count, 4096))  # short moves: the rest of a chunk is copied, not lost

    monkeypatch.setattr(os, "splice", splice_then_refuse)
    r, w = os.pipe()
    got, reader = _reading(r)
    pumped = _pumped_into(w)
    os.close(w)
    reader.join()
    os.close(r)
    assert b"".join(got) == DATA and calls[0] == 4  # refused once, then never asked again
    _expect(pumped)


def test_a_source_that_ends_with_no_byte_is_told_without_the_ring(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_ring(*_: object, **__: object) -> DigestRing:
        raise AssertionError("the ring was made for an empty source")

    monkeypatch.setattr("dunscaith.adapters.process.digest_ring.DigestRing", no_ring)
    r, w = os.pipe()
    os.close(w)
    out_r, out_w = os.pipe()
    try:
        pumped = pump(r, out_w)
        _expect(pumped, b"")
    finally:
        for fd in (r, out_r, out_w):
            os.close(fd)


def test_a_source_whose_first_byte_comes_late_is_pumped_whole(how: Callable[[int, int], Pumped]) -> None:
    """The wait for the first byte or the end is the wait the first read made: a slow start loses nothing."""
    r, w = os.pipe()
    def write_late() -> None:
        os.write(w, b"late\n")
        os.close(w)

    timer = threading.Timer(0.2, write_late)
    timer.start()
    out_r, out_w = os.pipe()
    try:
        pumped = pump(r, out_w)
        _expect(pumped, b"late\n")
        assert os.read(out_r, 100) == b"late\n"
    finally:
        timer.join()
        for fd in (r, out_r, out_w):
            os.close(fd)
