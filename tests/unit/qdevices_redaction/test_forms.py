"""Each form of a secret the seed lists is taken out; ordinary text is left alone."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.fernet import Fernet

from dunscaith.domain.model.qdevices.redaction import MARKER, Redactor

TOKEN = "mqss-Tok3n/with+odd=chars_0123456789abcdefXYZ"
PASSWORD = 'p@ss"w\\rd!{}<>#%^&*()0123456789ABCDEFGHIJKLMNOPQRST'  # 50 chars, like the VLQ envelope
SHORT = "s3cr!"


def b64(text: str, *, urlsafe: bool = False, pad: bool = True) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.standard_b64encode
    out = encode(text.encode()).decode()
    return out if pad else out.rstrip("=")


def embedded(secret: str, before: bytes, after: bytes = b"tail-bytes") -> str:
    return base64.standard_b64encode(before + secret.encode() + after).decode()


FORMS = {
    "whole": TOKEN,
    "json string": json.dumps({"token": TOKEN}),
    "json with escaped slash": json.dumps(TOKEN).replace("/", "\\/"),
    "json-escaped password": json.dumps({"pwd": PASSWORD}),
    "json escaped twice (a body inside a record line)": json.dumps({"body": json.dumps({"pwd": PASSWORD})}),
    "repr in a traceback": f"ValueError({PASSWORD!r})",
    "base64 padded": b64(TOKEN),
    "base64 unpadded": b64(TOKEN, pad=False),
    "base64url padded": b64(TOKEN, urlsafe=True),
    "base64url unpadded": b64(TOKEN, urlsafe=True, pad=False),
    "base64 of the password": b64(PASSWORD),
    "embedded in base64, alignment 0": embedded(TOKEN, b"abc"),
    "embedded in base64, alignment 1": embedded(TOKEN, b"abcd"),
    "embedded in base64, alignment 2": embedded(TOKEN, b"abcde"),
    "start of 8 characters": TOKEN[:8],
    "start of 20 characters": TOKEN[:20],
    "end of 8 characters": TOKEN[-8:],
    "end of 30 characters": TOKEN[-30:],
    "two copies": TOKEN + TOKEN,
}


@pytest.mark.parametrize("form", list(FORMS.values()), ids=list(FORMS))
def test_each_form_of_a_secret_is_removed(form: str) -> None:
    redactor = Redactor([TOKEN, PASSWORD])
    line = f'{{"event": "status", "detail": "x {form} y"}}'

    out = redactor.clean(line)

    assert MARKER in out
    assert form not in out
    for secret in (TOKEN, PASSWORD):
        assert secret[:8] not in out
        assert secret[-8:] not in out
    assert out.startswith('{"event": "status", "detail": "x ')


def test_a_short_secret_is_removed_whole_and_in_base64() -> None:
    redactor = Redactor([SHORT])
    out = redactor.clean(f"a {SHORT} b {json.dumps(SHORT)} c {b64(SHORT)} d")
    assert SHORT not in out
    assert b64(SHORT) not in out
    assert out.count(MARKER) == 3


def test_a_start_shorter_than_8_characters_is_ordinary_text() -> None:
    redactor = Redactor([TOKEN])
    line = f"see {TOKEN[:7]} and {TOKEN[-7:]}"
    assert redactor.clean(line) == line


def test_non_ascii_secret_in_both_json_forms() -> None:
    secret = "pässwörd-ünïcode-✓-0123456789"
    redactor = Redactor([secret])
    for form in (secret, json.dumps(secret), json.dumps(secret, ensure_ascii=False), b64(secret)):
        out = redactor.clean(f"<{form}>")
        assert out == f"<{MARKER}>" or (MARKER in out and form.strip('"') not in out)


JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyIiwiYXVkIjoicG9ydGFsIn0.c2lnbmF0dXJlLXBhcnQtb2YtdGhlLWp3dA"


@pytest.mark.parametrize(
    "line",
    [
        f"Authorization: Bearer {JWT}",
        f'{{"access_token": "{JWT}"}}',
        "alg none eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0. end",
    ],
    ids=["bearer header", "json field", "empty signature"],
)
def test_any_jwt_is_removed_without_being_a_secret(line: str) -> None:
    out = Redactor().clean(line)
    assert "eyJ" not in out
    assert MARKER in out


def test_fernet_text_and_its_base64_are_removed() -> None:
    token = Fernet(Fernet.generate_key()).encrypt(b"the LEXIS token")
    as_text = token.decode()
    user_token_enc = base64.b64encode(token).decode()  # the uploaded user_token.enc of the VLQ envelope
    redactor = Redactor()
    for line in (f"token={as_text};", f"file {user_token_enc} end", base64.b64encode(b"xy" + token).decode()):
        out = redactor.clean(line)
        assert as_text not in out
        assert user_token_enc[:40] not in out
        assert MARKER in out


def test_user_jwt_pwd_value_in_any_form() -> None:
    password = "Zq8#kLm2$Pw9!xYv4&Rt7*Ns1@Hb6^Jc3%Ud5(Fe0)Gi8_Ko2+"
    value = b64(password)  # USER_JWT_PWD = base64(password)
    redactor = Redactor([value])
    lines = [
        f"USER_JWT_PWD={value}",
        json.dumps({"EnvironmentVariables": [{"Name": "USER_JWT_PWD", "Value": value}]}),
        f"decrypted with {password}",
        f"double {b64(value)}",
        f"truncated {value[:12]}",
    ]
    for line in lines:
        out = redactor.clean(line)
        assert value[:8] not in out and password[:8] not in out and value[-8:] not in out, out


def test_user_jwt_pwd_assignment_is_cleaned_even_if_not_given() -> None:
    out = Redactor().clean('env: USER_JWT_PWD="cGFzc3dvcmQ=" and {"Name": "USER_JWT_PWD", "Value": "abc"}')
    assert "cGFzc3dvcmQ" not in out
    assert '"Value": "abc"' not in out


def test_with_secrets_adds_and_leaves_the_original_unchanged() -> None:
    first = Redactor([TOKEN])
    both = first.with_secrets(PASSWORD)
    line = f"{TOKEN} {PASSWORD}"
    assert both.clean(line) == f"{MARKER} {MARKER}"
    assert PASSWORD in first.clean(line)


def test_text_without_secrets_is_unchanged() -> None:
    line = '{"event": "status", "order": 3, "job": "4f1c9a2e-77b0-4d0e-9c1b-3e5f", "state": "COMPLETED"}'
    assert Redactor([TOKEN, PASSWORD, SHORT]).clean(line) == line


def test_empty_secrets_are_ignored() -> None:
    assert Redactor(["", ""]).clean("plain text") == "plain text"


def test_the_redactor_does_not_show_its_secrets() -> None:
    redactor = Redactor([TOKEN, PASSWORD])
    assert TOKEN not in repr(redactor) and PASSWORD[:8] not in repr(redactor)
    assert redactor.secret_count == 2


def test_many_secrets_each_form_of_each_is_removed() -> None:
    # The token and one envelope password per job: past a few dozen forms the filter scans windows.
    passwords = [f"{i:02d}" + PASSWORD[2:-2] + f"{i:02d}" for i in range(30)]
    redactor = Redactor([TOKEN, *passwords])
    for secret in (TOKEN, passwords[0], passwords[17], passwords[29]):
        for form in (secret, json.dumps(secret), b64(secret), embedded(secret, b"ab"), secret[:9], secret[-9:]):
            out = redactor.clean(f"line {form} end")
            assert out.startswith("line ") and out.endswith(" end")
            assert secret[:8] not in out and secret[-8:] not in out and b64(secret)[4:12] not in out, form
    assert redactor.clean("nothing secret here at all") == "nothing secret here at all"


def test_a_token_with_undecodable_bytes_from_the_environment() -> None:
    raw = b"tok-\xff\xfe-0123456789abcdef"
    secret = raw.decode("utf-8", "surrogateescape")  # how os.environ holds it
    redactor = Redactor([secret])
    for form in (secret, json.dumps(secret), base64.b64encode(raw).decode()):
        out = redactor.clean(f"<{form}>")
        assert MARKER in out and form.strip('"') not in out
