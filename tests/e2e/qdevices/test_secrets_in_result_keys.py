"""Issue 22 item 0: a site's result that holds a secret in its *keys* (and values), at every depth.

Every form seed 002 lists is put in the counts of a result: the token whole, in JSON form and by every
start and every end of 8 characters or more; a JWT; Fernet text and its base64; the value of
USER_JWT_PWD; for VLQ the envelope password of the job raw and in base64. None of them may reach the
record, any other file the app writes, or any output. Each site's result and status lines are tried.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet

from tests.e2e.qdevices.conftest import Cli
from tests.fakes.mqss_server import FakeMqss
from tests.fakes.piastq_server import FakePiastq
from tests.fakes.vlq_server import FakeVlq, VlqJob

pytestmark = pytest.mark.slow

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIiwibiI6MX0.c2lnbmF0dXJlLW9mLWEtand0"
FERNET = Fernet(Fernet.generate_key()).encrypt(b"the LEXIS token").decode()
FERNET_B64 = base64.b64encode(FERNET.encode()).decode()


def new_token() -> str:
    # A "/" and a '"' make the JSON form differ from the raw one.
    return "tok/" + secrets.token_urlsafe(24) + '"z'


def pieces(secret: str) -> list[str]:
    """The secret whole, in JSON form, and every start and every end of 8 characters or more."""
    n = len(secret)
    return [secret, json.dumps(secret)[1:-1], *(secret[:k] for k in range(8, n)), *(secret[-k:] for k in range(8, n))]


def shapes() -> list[str]:
    return [f"jwt {JWT}", f"fernet {FERNET}", f"b64 {FERNET_B64}", "USER_JWT_PWD=c2VjcmV0LXBhc3N3b3Jk"]


def nested(keys: list[str]) -> dict[str, Any]:
    """Each key at depth 1, as a key of a nested mapping, and inside a list; values hold them too."""
    return {
        **{key: i for i, key in enumerate(keys)},
        "nested": {key: {"deeper": {key: [key]}} for key in keys},
        "listed": [{key: i} for i, key in enumerate(keys)],
    }


def must_not_appear(secret: str) -> list[str]:
    """Every 8-character window of a secret: none may be written (only starts and ends were sent)."""
    return [secret[i : i + 8] for i in range(len(secret) - 7)] + [json.dumps(secret)[1:-1]]


def texts_of(cli: Cli, runs: list[Any]) -> list[str]:
    return [r.stdout + r.stderr for r in runs] + [cli.everything_written()]


def assert_clean(texts: list[str], secrets_: list[str]) -> None:
    for text in texts:
        for secret in secrets_:
            for window in must_not_appear(secret):
                assert window not in text, (window, text[:2000])
        for shape in (JWT, FERNET, FERNET_B64, "c2VjcmV0LXBhc3N3b3Jk"):
            assert shape[4:40] not in text, (shape, text[:2000])


def run_all(cli: Cli, orders: int = 1) -> list[Any]:
    manifest = str(cli.manifest(orders=orders, wait=5))
    runs = [cli.run("send", manifest, "--live", QDEVICES_DEBUG="1")]
    for record in cli.record_paths():
        runs.append(cli.run("jobs", str(record)))
        runs.append(cli.run("jobs", str(record), "--json"))
    return runs


@pytest.fixture
def token() -> str:
    return new_token()


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "home").mkdir()
    yield tmp_path


def test_mqss_result_keys_and_values_at_every_depth_are_cleaned(home: Path, token: str) -> None:
    keys = pieces(token) + shapes()
    with FakeMqss(token=token, hang_seconds=5.0, result=nested(keys)) as fake:
        cli = Cli(home, fake, token)
        runs = run_all(cli)
        assert runs[0].returncode == 0, runs[0].stderr
        result = next(x for x in cli.lines(cli.only_record()) if x["type"] == "result")
        counts = result["counts"]
        assert "[REDACTED]" in counts and "nested" in counts and "listed" in counts
        # no key was lost to a collision: every value the site gave is still there
        assert len(counts) == len(set(keys)) + 2
        assert_clean(texts_of(cli, runs), [token])


def test_mqss_status_word_holding_the_token_is_cleaned(home: Path, token: str) -> None:
    with FakeMqss(token=token, hang_seconds=5.0) as fake:
        fake.script("status", "answer", status=200, body={"status": token, token: {token[:9]: token[-9:]}})
        cli = Cli(home, fake, token)
        runs = run_all(cli)
        assert runs[0].returncode == 1, runs[0].stderr
        assert_clean(texts_of(cli, runs), [token])


def test_piastq_result_bitstrings_and_status_words_holding_secrets_are_cleaned(home: Path, token: str) -> None:
    keys = pieces(token) + shapes()
    with FakePiastq(token=token, hang_seconds=5.0, result=keys) as fake:
        cli = Cli(home, fake, token, site="piastq")
        runs = run_all(cli)
        assert runs[0].returncode == 0, runs[0].stderr
        result = next(x for x in cli.lines(cli.only_record()) if x["type"] == "result")
        assert any(k.startswith("[REDACTED]") for k in result["counts"])
        assert sum(result["counts"].values()) == len(keys)  # every shot is still counted
        assert_clean(texts_of(cli, runs), [token])


def test_piastq_status_word_holding_the_token_is_cleaned(home: Path, token: str) -> None:
    with FakePiastq(token=token, hang_seconds=5.0) as fake:
        fake.path = ("New", token)  # a word the app does not know: the wait ends on it
        cli = Cli(home, fake, token, site="piastq")
        runs = run_all(cli)
        assert runs[0].returncode == 1, runs[0].stderr
        assert_clean(texts_of(cli, runs), [token])


def vlq_envelope(job: VlqJob) -> tuple[str, str]:
    user_jwt_pwd = job.env["USER_JWT_PWD"]
    return base64.b64decode(user_jwt_pwd).decode(), user_jwt_pwd


def test_vlq_result_keys_holding_the_token_and_the_envelope_passwords_are_cleaned(home: Path, token: str) -> None:
    def result_of(job: VlqJob) -> Any:
        password, user_jwt_pwd = vlq_envelope(job)
        keys = pieces(token) + pieces(password) + pieces(user_jwt_pwd) + shapes()
        return nested([*keys, f"USER_JWT_PWD={user_jwt_pwd}"])

    with FakeVlq(token=token, hang_seconds=5.0, result_of=result_of) as fake:
        cli = Cli(home, fake, token, site="vlq")
        runs = run_all(cli)
        assert runs[0].returncode == 0, runs[0].stderr
        passwords = [s for job in fake.jobs.values() for s in vlq_envelope(job)]
        assert len(passwords) == 4  # the init job's and the order's
        assert_clean(texts_of(cli, runs), [token, *passwords])
