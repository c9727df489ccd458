"""The token: arguments travel as one base64 token; the protocol is read first; versions are compared."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.forwarding.request import (
    PROTOCOL,
    ForwardRequest,
    Kind,
    TokenError,
    UnknownProtocol,
    UnsafeBinaryPath,
    decode_token,
    encode_token,
    remote_command,
    version_warning,
)

RID = "0123456789abcdef0123456789abcdef"
HOSTILE = ["$(touch /tmp/pwned)", "`id`", "a; rm -rf ~", "line1\nline2", "'\"", "!!", "!$", "\\", "*", "~",
           "-x", "--help", "", " ", "é✓", "%s", "${HOME}", "a&&b", "|cat", ">out", "#c"]


def request(argv: tuple[str, ...] = ("status", "job"), **kw: object) -> ForwardRequest:
    fields: dict[str, object] = dict(request_id=RID, kind=Kind.RUN, argv=argv, caller_version="0.1.0",
                                     caller_host="login2", heartbeat_seconds=2.0, terminal=False)
    fields.update(kw)
    return ForwardRequest(**fields)  # type: ignore[arg-type]


def test_hostile_arguments_round_trip_inside_a_token_no_shell_interprets() -> None:
    token = encode_token(request(tuple(HOSTILE)))
    assert re.fullmatch(r"dsf\.[A-Za-z0-9_-]+", token)
    assert decode_token(token, "0.1.0").argv == tuple(HOSTILE)


@given(st.lists(st.text(), max_size=8), st.booleans())
def test_any_arguments_round_trip(argv: list[str], terminal: bool) -> None:
    original = request(tuple(argv), terminal=terminal)
    assert decode_token(encode_token(original), "x") == original


def test_the_remote_command_line_is_path_entry_token_and_nothing_else() -> None:
    token = encode_token(request())
    assert remote_command("/opt/ds/bin/dunscaith", token) == f"/opt/ds/bin/dunscaith _forwarded {token}"


@pytest.mark.parametrize("path", ["dunscaith", "/opt/my ds/bin/dunscaith", "/opt/$(id)/ds", "/a/`b`", "/a;b",
                                  "/a/../etc/x", "/a'b", "/a!b", ""])
def test_a_binary_path_a_shell_would_interpret_is_refused(path: str) -> None:
    with pytest.raises(UnsafeBinaryPath):
        remote_command(path, encode_token(request()))


def _raw(obj: dict[str, object]) -> str:
    return "dsf." + base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def test_an_unknown_protocol_is_refused_naming_both_protocols_and_versions() -> None:
    with pytest.raises(UnknownProtocol) as caught:
        decode_token(_raw({"protocol": 3, "caller_version": "0.9.0", "whatever": "new"}), "0.1.0")
    text = str(caught.value)
    assert "protocol 3" in text and f"protocol {PROTOCOL}" in text
    assert "dunscaith 0.9.0" in text and "dunscaith 0.1.0" in text and "nothing was run" in text


def test_a_caller_of_protocol_1_is_refused_before_anything_runs() -> None:
    # protocol 1's frames carried a bare SHA-256 where 2's carry a tagged digest: the two cannot be mixed
    with pytest.raises(UnknownProtocol) as caught:
        decode_token(_raw({"protocol": 1, "caller_version": "0.8.0"}), "0.1.0")
    assert "protocol 1" in str(caught.value) and "nothing was run" in str(caught.value)


@pytest.mark.parametrize("protocol", [None, "1", 1.0, True, 0])
def test_a_protocol_that_is_not_a_known_integer_is_unknown(protocol: object) -> None:
    obj = json.loads(base64.urlsafe_b64decode(encode_token(request())[4:] + "=="))
    obj["protocol"] = protocol
    with pytest.raises(UnknownProtocol):
        decode_token(_raw(obj), "0.1.0")


@pytest.mark.parametrize("token", ["", "status job", "dsf.", "dsf.!!!", "dsf.e30", "xsf." + "A" * 8,
                                   "dsf." + "A" * 70000])
def test_damaged_tokens_are_refused(token: str) -> None:
    with pytest.raises(TokenError):
        decode_token(token, "0.1.0")


@pytest.mark.parametrize("change", [{"extra": 1}, {"argv": [1]}, {"kind": "shell"}, {"request_id": "X"},
                                    {"heartbeat_seconds": 0}, {"terminal": "no"}])
def test_a_known_protocol_token_with_a_wrong_field_is_refused(change: dict[str, object]) -> None:
    obj = json.loads(base64.urlsafe_b64decode(encode_token(request())[4:] + "=="))
    obj.update(change)
    with pytest.raises(TokenError) as caught:
        decode_token(_raw(obj), "0.1.0")
    assert not isinstance(caught.value, UnknownProtocol)


def test_same_protocol_other_version_runs_with_a_warning_naming_both() -> None:
    assert version_warning("0.1.0", "0.1.0", "login1") is None
    warning = version_warning("0.2.0", "0.1.0", "login1")
    assert warning is not None and "0.2.0" in warning and "0.1.0" in warning and "runs" in warning
