"""clean_json: the filter over a JSON value of a record line, keys as well as values, at every depth."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.qdevices.redaction import MARKER, Redactor, clean_json

SECRET = "s3cr3t-token/abcdefghijklmnop"
REDACTOR = Redactor([SECRET])


def test_a_key_holding_the_secret_or_its_start_is_cleaned_at_every_depth() -> None:
    value = {SECRET: 1, "a": {f"{SECRET[:8]}x": [{SECRET[-9:]: 2}]}}
    assert clean_json(value, REDACTOR.clean) == {MARKER: 1, "a": {f"{MARKER}x": [{MARKER: 2}]}}


def test_keys_that_clean_alike_all_stay_with_their_values() -> None:
    value = {SECRET: 1, SECRET[:10]: 2, f"{MARKER} (2)": 3}
    cleaned = clean_json(value, REDACTOR.clean)
    assert sorted(cleaned.values()) == [1, 2, 3]
    assert set(cleaned) == {MARKER, f"{MARKER} (2)", f"{MARKER} (3)"}


def test_other_values_are_left_as_they_are() -> None:
    value = {"00": 5, "11": [1.5, None, True], "x": "plain"}
    assert clean_json(value, REDACTOR.clean) == value


JSON = st.recursive(st.none() | st.integers() | st.text(max_size=12) | st.just(SECRET),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                        st.text(max_size=6) | st.just(SECRET) | st.just(SECRET[:12]), inner, max_size=4),
                    max_leaves=12)


def _leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_leaves(v) for v in value.values()) + len(value)
    if isinstance(value, list):
        return sum(_leaves(v) for v in value)
    return 1


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_no_form_of_the_secret_survives_and_nothing_is_dropped(value: Any) -> None:
    cleaned = clean_json(value, REDACTOR.clean)
    text = json.dumps(cleaned)
    assert SECRET[:8] not in text and SECRET[-8:] not in text
    assert _leaves(cleaned) == _leaves(value)
