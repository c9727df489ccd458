"""Issue 22 item 13: a value the user gave is echoed on one line, escaped and cut."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.shown import cut, escaped, one_line, reason, shown

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _by_regex(text: str) -> str:
    """What ``escaped`` and ``one_line`` gave before their fast paths: the regex on every text."""
    inert = re.sub(r"[\x00-\x1f\x7f-\x9f]", lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)
    return re.sub(r"\S{257,}", lambda m: cut(m.group(), 160), inert)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=600)
       | st.builds(lambda w, n: w * n, st.sampled_from(["a", "\x85", "\u00a0", "é"]), st.integers(200, 400)))
def test_the_fast_paths_say_what_the_regexes_say(text: str) -> None:
    assert one_line(text) == _by_regex(text)


def test_control_characters_are_escaped_and_the_value_quoted() -> None:
    assert shown("seed\nx") == "'seed\\nx'"
    assert shown("\x1b[31mred\x7f") == "'\\x1b[31mred\\x7f'"
    assert shown("it's") == "'it\\'s'"
    assert escaped("a\tb\r") == "a\\tb\\r"


def test_a_long_value_is_cut_with_its_length_said() -> None:
    text = shown("a" * 10_000)
    assert len(text) < 120 and text.endswith("(10000 characters)'") and "…" in text
    assert shown("b" * 80) == "'" + "b" * 80 + "'"


def test_a_whole_message_stays_one_line_and_an_unshown_long_word_is_cut() -> None:
    line = one_line("no job named " + "z" * 5000 + "\nis recorded")
    assert "\n" not in line and "(5004 characters)" in line and len(line) < 300  # the escaped newline joins its word
    assert one_line("plain words stay as they are") == "plain words stay as they are"


def test_an_os_error_is_said_as_what_and_where_without_its_class() -> None:
    assert reason(PermissionError(13, "Permission denied", "/var/tmp/x")) == "/var/tmp/x: Permission denied"
    assert reason(FileNotFoundError(2, "No such file or directory")) == "No such file or directory"
    assert reason(ValueError("its own words")) == "its own words"
    assert reason(RuntimeError()) == "RuntimeError"
