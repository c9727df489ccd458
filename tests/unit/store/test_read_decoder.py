"""One read decodes each distinct text of its rows once (issue 15), and hands out nothing a caller can change."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from dunscaith.adapters.store.event_codec import ReadDecoder, decode_time, encode_time

OBSERVED = '{"attempt":1,"exit_code":null,"object_id":"4242","reason":"","signal":null,"state":"running"}'


def test_identical_texts_read_as_one_equal_mapping() -> None:
    fields = ReadDecoder().data
    first, again = fields(OBSERVED), fields(str(OBSERVED[:10] + OBSERVED[10:]))  # an equal text, another object
    assert first is again
    assert first == {"attempt": 1, "exit_code": None, "object_id": "4242", "reason": "", "signal": None,
                     "state": "running"}


def test_a_mapping_read_cannot_be_changed() -> None:
    fields = ReadDecoder().data
    for text in (OBSERVED, '{"list":[1]}'):
        with pytest.raises(TypeError):
            fields(text)["state"] = "ended"  # type: ignore[index]


def test_a_text_with_a_list_inside_is_decoded_anew_for_each_row() -> None:
    fields = ReadDecoder().data
    one, other = fields('{"command":["true"]}'), fields('{"command":["true"]}')
    assert one == other and one is not other
    one["command"].append("--flag")
    assert other == {"command": ["true"]}


def test_another_read_shares_nothing_with_the_first() -> None:
    assert ReadDecoder().data(OBSERVED) is not ReadDecoder().data(OBSERVED)


@pytest.mark.parametrize("bad", ['{"attempt":', "[1]", "null"])
def test_a_text_that_does_not_decode_is_refused_each_time_it_is_met(bad: str) -> None:
    fields = ReadDecoder().data
    fields(OBSERVED)
    for _ in range(2):
        with pytest.raises(ValueError):
            fields(bad)
    assert fields(OBSERVED)["state"] == "running"


def test_a_time_reads_back_as_written_in_utc_from_any_zone() -> None:
    at = datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)
    assert decode_time(encode_time(at)) == at and decode_time(encode_time(at)).tzinfo is UTC
    there = decode_time("2026-01-01T13:00:00.123456+01:00")
    assert there == at and there.tzinfo is UTC
    assert decode_time(encode_time(at.astimezone(timezone(timedelta(hours=-5))))) == at
