"""The holes that black-box live runs against the MQSS fake found, each a named test on the real CLI."""

from __future__ import annotations

import json

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow

JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2lnbmF0dXJlLW9mLWEtam9i"


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def status_paths(cli: Cli) -> list[str]:
    return [e.path for e in cli.fake.requests("status", "result")]


@pytest.mark.parametrize("kind", ["token", "jwt"])
def test_a_job_id_holding_the_token_or_a_jwt_is_never_put_in_a_url_and_resolve_takes_it(cli: Cli,
                                                                                       kind: str) -> None:
    job = f"job-{cli.token}" if kind == "token" else JWT
    cli.fake.script("submit", "answer", status=200, body={"uuid": job})
    manifest = str(cli.manifest(orders=1))
    done = cli.run("send", manifest, "--live")
    assert done.returncode == 1 and "Stopped (status_error)" in done.stderr, done.stderr
    record = str(cli.only_record())
    again = cli.run("send", manifest, "--live", "--resume", record)
    assert again.returncode == 1 and "never put in a request" in again.stderr
    assert status_paths(cli) == []  # never GET /v1/job/%5BREDACTED%5D/status
    assert cli.token not in cli.everything_written() + done.stderr + again.stderr
    resolved = cli.run("resolve", record, "1", "--none")
    assert resolved.returncode == 0 and "counts at job_seconds_limit" in resolved.stdout, resolved.stderr
    assert cli.run("send", manifest, "--live").returncode == 0  # no longer blocks the site


def test_resolve_job_takes_a_redacted_id_with_the_id_the_site_shows(cli: Cli) -> None:
    cli.fake.script("submit", "answer", status=200, body={"uuid": f"job-{cli.token}"})
    manifest = str(cli.manifest(orders=1))
    cli.run("send", manifest, "--live")
    record = str(cli.only_record())
    refused = cli.run("resolve", record, "1", "--job", "job-[REDACTED]")
    assert refused.returncode == 2 and "give the id the site shows" in one_line(refused.stderr)
    blocked = cli.run("send", str(cli.manifest(orders=1, name="other")), "--live")
    assert blocked.returncode == 2  # the open order of the first run still blocks the site
    taken = cli.run("resolve", record, "1", "--job", "0c1d2e3f-good-id")
    assert taken.returncode == 0 and "a resume collects it" in taken.stdout, taken.stderr


@pytest.mark.parametrize("token", ["mqss", "run", "short-token"])
def test_a_token_shorter_than_16_characters_is_refused_at_start(cli: Cli, token: str) -> None:
    done = cli.run("send", str(cli.manifest()), "--live", MQSS_TOKEN=token)
    assert done.returncode == 2 and "shorter than 16 characters" in one_line(done.stderr)
    assert cli.fake.journal == [] and not cli.records.exists()
    assert cli.run("check", MQSS_TOKEN=token).returncode == 2


def test_redaction_never_rewrites_the_records_own_keys_and_fixed_values(cli: Cli) -> None:
    cli.token = "mqss-run-o1-start-token"  # holds words of the record; its 8-character pieces do too
    cli.fake.token = cli.token
    manifest = str(cli.manifest(orders=1))
    done = cli.run("send", manifest, "--live")
    assert done.returncode == 0, done.stderr
    record = cli.only_record()
    first = cli.lines(record)[0]
    assert (first["site"], first["run"], first["orders"]) == ("mqss", "run", ["o1"])
    assert str(record) in done.stdout and first["path"] == str(record)
    assert cli.run("send", manifest, "--live", "--resume", str(record), "--max-order", "1").returncode == 0


def test_a_job_id_with_a_newline_is_printed_escaped(cli: Cli) -> None:
    cli.fake.script("submit", "answer", status=200, body={"uuid": "abc\nFAKE LINE: Done"})
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    assert done.returncode == 1
    printed = (done.stdout + done.stderr).splitlines()
    assert not any(line.startswith("FAKE LINE") for line in printed)
    assert "abc\\nFAKE LINE: Done" in done.stdout + done.stderr
    record = str(cli.only_record())
    listing = cli.run("jobs", record)
    assert not any(line.startswith("FAKE LINE") for line in listing.stdout.splitlines())
    assert cli.run("resolve", record, "1", "--none").returncode == 0


def test_the_blocker_for_another_runners_open_order_says_gone_or_the_other_runner(cli: Cli) -> None:
    other = cli.tmp / "other-runner"
    other.mkdir()
    start = {"type": "start", "at": "2026-01-01T00:00:00+00:00", "app": "elsewhere", "format": 1, "site": "mqss",
             "site_device": "Q5", "run": "theirs", "manifest": "/x.toml", "host": "h", "path": "/p", "device": 0,
             "inode": 0, "pid": 1, "orders": ["t1"], "resume": False, "job_seconds_limit": 60}
    lines = [start, {"type": "submitting", "at": "2026-01-01T00:00:01+00:00", "order": 1, "name": "t1"},
             {"type": "submitted", "at": "2026-01-01T00:00:02+00:00", "order": 1, "job": "their-job"}]
    (other / "theirs.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    cli.config(f'[mqss]\nolder_records = ["{other}"]\n')
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    line = one_line(done.stderr)
    assert done.returncode == 2 and "--gone" in line and "another runner" in line and "--resume" not in line
    dry = cli.run("send", str(cli.manifest(orders=1)))
    assert "--gone" in dry.stdout
    gone = cli.run("resolve", str(other / "theirs.jsonl"), "1", "--gone")
    assert gone.returncode == 0, gone.stderr
    assert cli.run("send", str(cli.manifest(orders=1)), "--live").returncode == 0


@pytest.mark.parametrize("where", ["import", "before_order", "after_result"])
def test_a_rules_file_that_calls_sys_exit_cannot_end_the_call(cli: Cli, where: str) -> None:
    body = {"import": "import sys\nsys.exit(0)\n",
            "before_order": "import sys\ndef before_order(order):\n    sys.exit(0)\n",
            "after_result": "import sys\ndef after_result(order):\n    sys.exit(0)\n"}[where]
    (cli.tmp / "rules.py").write_text(body)
    done = cli.run("send", str(cli.manifest(orders=1, extra='rules = "rules.py"')), "--live")
    if where == "import":
        assert done.returncode == 2 and "cannot end the call" in one_line(done.stderr)
        assert cli.fake.journal == []
        return
    assert done.returncode == 1 and "Stopped (rule)" in done.stderr and "cannot end the call" in done.stderr
    last = cli.lines(cli.only_record())[-1]
    assert (last["type"], last["reason"]) == ("stop", "rule")
    assert len(cli.fake.requests("submit")) == (0 if where == "before_order" else 1)


def test_check_exits_2_when_the_token_variable_is_unset(cli: Cli) -> None:
    done = cli.run("check", MQSS_TOKEN="")
    assert done.returncode == 2 and "MQSS_TOKEN is not set" in one_line(done.stderr)
    assert cli.run("check", "--site", "piastq").returncode == 2  # PCSS_API_KEY is not set


def test_dry_run_and_check_say_which_checks_ran_and_which_need_live(cli: Cli) -> None:
    dry = cli.run("send", str(cli.manifest(orders=1)))
    assert dry.returncode == 0
    assert "Checked: the manifest and its circuits" in dry.stdout and "needs --live" in dry.stdout
    check = cli.run("check")
    assert check.returncode == 0 and "Checked: the configuration, MQSS_TOKEN" in check.stdout
    assert "needs --live: whether mqss takes the token" in check.stdout
    vlq = cli.run("check", "--site", "vlq", LEXIS_TOKEN=cli.token)
    assert vlq.returncode == 0 and "the LEXIS project" in vlq.stdout
    assert cli.fake.journal == []
