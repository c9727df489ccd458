"""VLQ on the real CLI: the token, each envelope password (raw and in base64, the value of USER_JWT_PWD)
and the Fernet text of user_token.enc appear in no output and no file the app writes, even when HEAppE
repeats a request in its error."""

from __future__ import annotations

import base64
import json

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow


def secret_forms(cli: Cli) -> set[str]:
    forms = {cli.token, json.dumps(cli.token)[1:-1]}
    for job in cli.fake.jobs.values():
        pwd_b64 = job.env.get("USER_JWT_PWD", "")
        password = base64.b64decode(pwd_b64).decode()
        forms |= {pwd_b64, password, json.dumps(password)[1:-1], password[:12], password[-12:], pwd_b64[:12]}
        enc = job.files.get("user_token.enc")
        if enc:
            forms |= {enc.decode(), base64.b64decode(enc).decode()[:40]}
    return {f for f in forms if f}


@pytest.mark.parametrize("fault", [None, ("create", 500), ("submit", 404), ("upload", 500), ("create", 400)])
def test_no_secret_of_a_vlq_call_reaches_any_output_or_file(vlq_cli: Cli, fault: tuple[str, int] | None) -> None:
    cli = vlq_cli
    if fault is not None:
        cli.fake.script_metered(fault[0], "echo_body", status=fault[1])
    manifest = str(cli.manifest(orders=2))
    runs = [cli.run("send", manifest, "--live", QDEVICES_DEBUG="1")]
    record = str(cli.only_record())
    runs.append(cli.run("send", manifest, "--live", "--resume", record, "--max-order", "2", QDEVICES_DEBUG="1"))
    runs.append(cli.run("jobs", record, "--json"))
    if fault is not None:
        # HEAppE's own words reach the user and the record, with the secrets it repeated taken out
        assert "Problem" in runs[0].stderr
        if fault[0] in ("create", "upload"):  # those requests carry USER_JWT_PWD, the Fernet envelope
            assert "[REDACTED]" in runs[0].stderr + cli.everything_written()
    texts = [r.stdout + r.stderr for r in runs] + [cli.everything_written()]
    forms = secret_forms(cli)
    assert len(forms) > 4
    for text in texts:
        for form in forms:
            assert form not in text, (fault, form)
    assert cli.fake.token_seen_outside_authorization() == []  # the upload holds it only encrypted
