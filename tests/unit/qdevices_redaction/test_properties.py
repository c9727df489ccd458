"""Properties: for any secret in any form inside any text, no form survives; other text is left alone."""

from __future__ import annotations

import base64
import json
import string

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.qdevices.redaction import MARKER, Redactor

PRINTABLE = st.text(alphabet=st.sampled_from(string.printable), min_size=8, max_size=80)
ANY_ALPHABET = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=8, max_size=80)
TOKEN_LIKE = st.text(alphabet=string.ascii_letters + string.digits + "-_.+/=", min_size=8, max_size=80)
SECRETS = st.one_of(PRINTABLE, ANY_ALPHABET, TOKEN_LIKE)
TEXT = st.text(max_size=120)
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])


def b64_core(secret: str, alignment: int, urlsafe: bool) -> str:
    """The base64 characters decided by the secret alone, at a byte alignment inside a longer text."""
    encode = base64.urlsafe_b64encode if urlsafe else base64.standard_b64encode
    encoded = encode(b"\0" * alignment + secret.encode()).decode()
    return encoded[-(-8 * alignment // 6) : 8 * (alignment + len(secret.encode())) // 6]


def whole_forms(secret: str) -> dict[str, str]:
    data = secret.encode()
    forms = {
        "raw": secret,
        "json": json.dumps(secret)[1:-1],
        "json-unicode": json.dumps(secret, ensure_ascii=False)[1:-1],
        "b64": base64.standard_b64encode(data).decode(),
        "b64-nopad": base64.standard_b64encode(data).decode().rstrip("="),
        "b64url": base64.urlsafe_b64encode(data).decode(),
        "b64url-nopad": base64.urlsafe_b64encode(data).decode().rstrip("="),
    }
    return forms


def no_marker_overlap(secret: str) -> bool:
    # The marker itself must not spell a piece of the secret, or the check below would find it there.
    return not any(MARKER[i : i + 8] in secret for i in range(len(MARKER) - 7))


@SETTINGS
@given(secret=SECRETS, before=TEXT, after=TEXT, form=st.sampled_from(sorted(whole_forms("x"))))
def test_no_whole_form_survives(secret: str, before: str, after: str, form: str) -> None:
    assume(no_marker_overlap(secret))
    shown = whole_forms(secret)[form]
    out = Redactor([secret]).clean(before + shown + after)
    for name, text in whole_forms(secret).items():
        assert text not in out, name
    assert secret[:8] not in out


@SETTINGS
@given(
    secret=SECRETS,
    head=st.binary(max_size=20),
    tail=st.binary(max_size=20),
    urlsafe=st.booleans(),
    before=TEXT,
    after=TEXT,
)
def test_base64_of_the_secret_inside_other_bytes_is_removed(
    secret: str, head: bytes, tail: bytes, urlsafe: bool, before: str, after: str
) -> None:
    assume(no_marker_overlap(secret))
    encode = base64.urlsafe_b64encode if urlsafe else base64.standard_b64encode
    blob = encode(head + secret.encode() + tail).decode()
    out = Redactor([secret]).clean(before + " " + blob + " " + after)
    core = b64_core(secret, len(head) % 3, urlsafe)
    assert core[:8] not in out
    assert core[-8:] not in out


@SETTINGS
@given(secret=SECRETS, data=st.data(), before=TEXT, after=TEXT, json_form=st.booleans())
def test_every_start_and_end_of_8_or_more_is_removed(
    secret: str, data: st.DataObject, before: str, after: str, json_form: bool
) -> None:
    assume(no_marker_overlap(secret))
    size = data.draw(st.integers(min_value=8, max_value=len(secret)))
    piece = data.draw(st.sampled_from([secret[:size], secret[-size:]]))
    shown = json.dumps(piece)[1:-1] if json_form else piece
    assume(len(shown) >= 8)
    out = Redactor([secret]).clean(before + shown + after)
    assert piece not in out
    assert shown not in out


def windows(text: str, size: int = 8) -> set[str]:
    return {text[i : i + size] for i in range(max(1, len(text) - size + 1))}


@SETTINGS
@given(secret=SECRETS, text=st.text(max_size=300))
def test_text_without_the_secret_is_cleaned_as_if_there_were_no_secret(secret: str, text: str) -> None:
    pieces: set[str] = set()
    for form in whole_forms(secret).values():
        pieces |= windows(form)
    for alignment in range(3):
        for urlsafe in (False, True):
            pieces |= windows(b64_core(secret, alignment, urlsafe))
    assume(not any(p in text for p in pieces))
    assert Redactor([secret]).clean(text) == Redactor().clean(text)


SHAPE_FREE = st.text(max_size=300).filter(lambda t: "eyJ" not in t and "gAAAAA" not in t and "USER_JWT_PWD" not in t)


@SETTINGS
@given(text=SHAPE_FREE)
def test_text_with_no_jwt_or_fernet_shape_passes_unchanged(text: str) -> None:
    assert Redactor().clean(text) == text


JWT_PART = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=2, max_size=60)


@SETTINGS
@given(header=JWT_PART, payload=JWT_PART, signature=JWT_PART, before=TEXT, after=TEXT)
def test_any_jwt_shape_is_removed(header: str, payload: str, signature: str, before: str, after: str) -> None:
    jwt = f"eyJ{header}.{payload}.{signature}"
    out = Redactor().clean(before + " " + jwt + " " + after)
    assert jwt not in out
    assert f"{payload}.{signature}" not in out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(
    many=st.lists(TOKEN_LIKE | PRINTABLE, min_size=5, max_size=40, unique=True),
    data=st.data(),
    before=TEXT,
    after=TEXT,
)
def test_with_many_secrets_no_form_of_any_survives(
    many: list[str], data: st.DataObject, before: str, after: str
) -> None:
    secret = data.draw(st.sampled_from(many))
    assume(all(no_marker_overlap(s) for s in many))
    form = data.draw(st.sampled_from(sorted(whole_forms(secret))))
    out = Redactor(many).clean(before + whole_forms(secret)[form] + after)
    for name, text in whole_forms(secret).items():
        assert text not in out, name
