"""Frames: only this request's frames are read; startup-file text, other ids and damaged lines are discarded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.forwarding.frames import (
    MAX_LINE,
    MAX_PAYLOAD,
    ExitStatus,
    Frame,
    FrameKind,
    FrameReader,
    encode_data,
    encode_frame,
    encode_json,
    exit_payload,
    read_exit,
)
from dunscaith.domain.model.strict_json import DecodeError

RID = "0123456789abcdef0123456789abcdef"
OTHER = "f" * 32


def test_output_outside_the_frames_is_discarded_and_counted() -> None:
    junk = b"Welcome to login1\nlast login: never\n"
    stream = (junk + encode_frame(RID, FrameKind.OUT, b"hello\n") + b"motd\n" + encode_frame(OTHER, FrameKind.OUT, b"x")
              + encode_frame(RID, FrameKind.BEAT) + b"DSF1 " + RID.encode() + b" out !!!\n" + b"bye from .logout")
    reader = FrameReader(RID)
    frames = reader.feed(stream)
    reader.finish()
    assert frames == [Frame(FrameKind.OUT, b"hello\n"), Frame(FrameKind.BEAT)]
    assert reader.discarded_bytes > len(junk)


def test_a_terminal_carriage_return_is_tolerated() -> None:
    line = encode_frame(RID, FrameKind.ERR, b"e").replace(b"\n", b"\r\n")
    assert FrameReader(RID).feed(line) == [Frame(FrameKind.ERR, b"e")]


def test_a_frame_after_the_remote_terminal_s_echo_of_ctrl_c_on_its_line_is_read() -> None:
    """At a terminal, the remote one echoes a typed ^C (or keys typed without Enter) into the stream,
    before the next frame on its line: the frame that ends the line is still this request's frame."""
    err = encode_frame(RID, FrameKind.ERR, b"not answered within 60 s\n").replace(b"\n", b"\r\n")
    reader = FrameReader(RID)
    assert reader.feed(b"^C" + err + b"abc" + encode_frame(RID, FrameKind.BEAT)) == [
        Frame(FrameKind.ERR, b"not answered within 60 s\n"), Frame(FrameKind.BEAT)]
    assert reader.discarded_bytes == len(b"^Cabc")


def test_a_frame_cut_short_on_its_line_is_dropped_and_the_frame_after_it_read() -> None:
    """A remote terminal that flushed its output (Ctrl-C without NOFLSH) can leave a frame's head glued
    to the next frame: the head is no frame, the whole frame after it is."""
    head = encode_frame(RID, FrameKind.OUT, b"lost tail")[:30]
    assert FrameReader(RID).feed(head + encode_frame(RID, FrameKind.OUT, b"x")) == [Frame(FrameKind.OUT, b"x")]


def test_text_glued_after_a_frame_or_another_request_s_frame_is_not_a_frame() -> None:
    reader = FrameReader(RID)
    assert reader.feed(encode_frame(RID, FrameKind.OUT, b"x").rstrip(b"\n") + b"junk\n") == []
    assert reader.feed(b"junk" + encode_frame(OTHER, FrameKind.OUT, b"x")) == []


@given(st.binary(max_size=3 * MAX_PAYLOAD), st.integers(min_value=1, max_value=5000))
def test_data_split_at_any_point_is_read_back_whole(data: bytes, step: int) -> None:
    stream = b"".join(encode_data(RID, FrameKind.OUT, data))
    reader = FrameReader(RID)
    frames: list[Frame] = []
    for start in range(0, len(stream), step):
        frames += reader.feed(stream[start:start + step])
    assert b"".join(f.payload for f in frames) == data
    assert reader.discarded_bytes == 0


def test_an_overlong_line_is_dropped_without_being_held_and_the_next_frame_read() -> None:
    reader = FrameReader(RID)
    assert reader.feed(b"x" * (MAX_LINE + 10)) == []
    assert reader.feed(b"y" * 100 + b"\n" + encode_frame(RID, FrameKind.BEAT)) == [Frame(FrameKind.BEAT)]


def test_the_exit_status_travels_in_the_final_frame() -> None:
    status = ExitStatus(255, 12, "blake3:" + "ab" * 32)
    frame = FrameReader(RID).feed(encode_json(RID, FrameKind.EXIT, exit_payload(status)))[0]
    assert read_exit(frame) == status


def test_an_exit_frame_whose_digest_names_no_algorithm_is_refused() -> None:
    frame = FrameReader(RID).feed(encode_json(RID, FrameKind.EXIT,
                                              {"code": 0, "stdout_bytes": 0, "stdout_digest": "ab" * 32}))[0]
    with pytest.raises(DecodeError, match="stdout_digest is not a digest"):
        read_exit(frame)
