"""Property: whatever the token and whatever the site answers, it appears in no output, record or traceback."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.qdevices.conftest import Cli
from tests.fakes.mqss_server import FakeMqss

pytestmark = pytest.mark.slow

TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"
SCENARIOS = ["ok", "refuse", "drop_after_create", "redirect", "echo_in_job_id", "echo_in_error", "malformed_result",
             "rules_error"]


def script(fake: FakeMqss, scenario: str) -> None:
    if scenario == "refuse":
        fake.script("submit", "refuse")
    elif scenario == "drop_after_create":
        fake.script("submit", "drop_after_create")
    elif scenario == "redirect":
        fake.script("submit", "redirect", status=307)
    elif scenario == "echo_in_job_id":  # a site that puts the token in what the app records
        fake.script("submit", "answer", status=200, body={"uuid": f"job-{fake.token}"})
    elif scenario == "echo_in_error":
        fake.script("status", "answer", status=400, body={"detail": f"bad token {fake.token}"})
    elif scenario == "malformed_result":
        fake.script("result", "malformed_result", body={"result": fake.token})


@pytest.mark.parametrize("scenario", SCENARIOS)
@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(token=st.text(alphabet=TOKEN_CHARS, min_size=20, max_size=60))
def test_a_random_token_never_appears_in_any_output_record_log_or_traceback(token: str, scenario: str) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeMqss(token=token, hang_seconds=2.0) as fake:
        cli = Cli(Path(tmp), fake, token, env={"QDEVICES_DEBUG": "1"})
        cli.home.mkdir()
        extra = ""
        if scenario == "rules_error":  # a traceback of the program, printed in full under QDEVICES_DEBUG
            (cli.tmp / "rules.py").write_text("def after_result(order):\n    raise RuntimeError(order['job'])\n")
            extra = 'rules = "rules.py"'
        script(fake, scenario)
        manifest = str(cli.manifest(orders=1, wait=2, extra=extra))
        runs = [cli.run("send", manifest, "--live")]
        if cli.records.exists():
            for record in cli.record_paths():
                runs.append(cli.run("jobs", str(record), "--json"))
                runs.append(cli.run("send", manifest, "--live", "--resume", str(record)))
        runs.append(cli.run("check", "--live"))
        texts = [r.stdout + r.stderr for r in runs] + [cli.everything_written()]
        forms = {token, json.dumps(token)[1:-1], token[:12], token[-12:]}
        for text in texts:
            for form in forms:
                assert form not in text, (scenario, text)
        assert not fake.trap.saw_token and fake.token_seen_outside_authorization() == []
