"""qdevices send, jobs, resolve, unlock and check as a user runs them, against the fake MQSS server."""

from __future__ import annotations

import json

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_a_dry_run_prints_the_plan_and_the_bound_and_sends_nothing(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest(limit=60)))
    assert done.returncode == 0, done.stderr
    assert "Dry run: nothing is sent" in done.stdout and "120 s if every planned order" in done.stdout
    assert cli.fake.journal == [] and not cli.records.exists()


def test_a_live_run_sends_each_order_once_and_jobs_shows_them_final(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest()), "--live")
    assert done.returncode == 0, done.stderr
    assert cli.posts_per_order() == {1: 1, 2: 1}
    record = cli.only_record()
    listing = cli.run("jobs", str(record), "--json")
    rows = [json.loads(x) for x in listing.stdout.splitlines()]
    assert [(r["state"], r["outcome"]) for r in rows] == [("final", "completed")] * 2
    table = cli.run("jobs", str(record)).stdout.splitlines()
    assert table[1].split() == ["ORDER", "NAME", "STATE", "JOB", "SECONDS", "COUNTED", "NOTE"]
    assert table[2].split()[1:3] == ["o1", "final"] and table[2].rstrip().endswith("completed")
    assert [len(line.split("final")[0]) for line in table[2:4]] == [len(table[1].split("STATE")[0])] * 2  # aligned
    footer = table[-1]
    assert footer.startswith("budget of mqss, 1 record(s): used ") and "left " in footer


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such manifest"),
    ("site = [", "not TOML"),
    ('site = "mqss"\n', "missing device"),
    ('site = "mqss"\ndevice = "Q5"\ncolour = 1\n[limits]\njob_seconds_limit=1\nbudget_seconds=1\n'
     '[[orders]]\nname="a"\ncircuit="bell.qasm"\nshots=1\n', "unknown key"),
    ('site = "mqss"\ndevice = "Q5"\n[limits]\njob_seconds_limit=1\nbudget_seconds=1\n'
     '[[orders]]\nname="a"\ncircuit="nope.qasm"\nshots=1\n', "cannot be read"),
    ('site = "mqss"\ndevice = "Q5"\n[limits]\njob_seconds_limit=1\nbudget_seconds=1\n'
     '[[orders]]\nname="a"\ncircuit="m.toml"\nshots=1\n', "not an OpenQASM circuit"),
])
def test_a_bad_manifest_gets_one_line_and_exit_2(cli: Cli, content: str | None, message: str) -> None:
    path = cli.tmp / "m.toml"
    if content is not None:
        path.write_text(content)
    for live in ([], ["--live"]):
        done = cli.run("send", str(path), *live)
        assert done.returncode == 2 and message in one_line(done.stderr)
        assert "Traceback" not in done.stderr
    assert cli.fake.journal == []


def test_a_corrupt_record_gets_one_line_and_exit_2(cli: Cli) -> None:
    cli.run("send", str(cli.manifest()), "--live")
    record = cli.only_record()
    lines = record.read_bytes().split(b"\n")
    lines[2] = b"{broken"
    record.write_bytes(b"\n".join(lines))
    for args in (["jobs", str(record)], ["send", str(cli.manifest()), "--live", "--resume", str(record)],
                 ["resolve", str(record), "1", "--none"], ["send", str(cli.manifest()), "--live"]):
        done = cli.run(*args)
        assert done.returncode == 2 and "line 3 is damaged" in one_line(done.stderr), (args, done.stderr)


def test_a_torn_last_line_is_reported_and_the_rest_reads(cli: Cli) -> None:
    cli.run("send", str(cli.manifest()), "--live")
    record = cli.only_record()
    with record.open("ab") as f:
        f.write(b'{"type":"stop","reas')
    done = cli.run("jobs", str(record))
    assert done.returncode == 0 and "cut by a crash mid-write" in done.stderr and "o2" in done.stdout


def test_no_token_is_one_line_and_exit_2(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest()), "--live", MQSS_TOKEN="")
    assert done.returncode == 2 and "MQSS_TOKEN is not set" in one_line(done.stderr)


def test_a_refusal_is_final_and_stops_the_run_exit_1(cli: Cli) -> None:
    cli.fake.script("submit", "refuse", status=403)
    done = cli.run("send", str(cli.manifest()), "--live")
    assert done.returncode == 1 and "Stopped (refusal)" in done.stderr
    assert cli.posts_per_order() == {1: 1}


def test_on_refusal_in_the_rules_file_lets_the_run_go_on(cli: Cli) -> None:
    (cli.tmp / "rules.py").write_text("def on_refusal(order):\n    return True\n")
    cli.fake.script("submit", "refuse")
    done = cli.run("send", str(cli.manifest(extra='rules = "rules.py"')), "--live")
    assert done.returncode == 0, done.stderr
    assert cli.posts_per_order() == {1: 1, 2: 1}


def test_the_rules_file_never_sees_the_token(cli: Cli) -> None:
    (cli.tmp / "rules.py").write_text(
        "import os\nSEEN = [v for v in ('MQSS_TOKEN', 'LEXIS_TOKEN', 'PCSS_API_KEY') if v in os.environ]\n"
        "def before_order(order):\n    return 'saw ' + ','.join(SEEN) if SEEN else None\n")
    done = cli.run("send", str(cli.manifest(extra='rules = "rules.py"')), "--live")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("fault", ["drop_after_create", "half_body", "server_error", "no_job_id"])
def test_no_good_answer_is_a_stop_unknown_exit_2_never_sent_again(cli: Cli, fault: str) -> None:
    manifest = str(cli.manifest())
    cli.fake.script("submit", fault)
    done = cli.run("send", manifest, "--live")
    assert done.returncode == 2, done.stderr
    assert "Stopped (unknown)" in done.stderr
    assert "Under way at the stop: order 1 (o1), job not known" in done.stderr
    record = cli.only_record()
    assert f"Resume with: qdevices send {manifest} --live --resume {record}" in done.stderr
    rows = [json.loads(x) for x in cli.run("jobs", str(record), "--json").stdout.splitlines()]
    assert rows[0]["state"] == "lost"
    assert cli.run("send", manifest, "--live").returncode == 2  # a lost order blocks a new run
    assert cli.run("send", manifest, "--live", "--resume", str(record), "--max-order", "2").returncode == 2
    collect = cli.run("send", manifest, "--live", "--resume", str(record))
    assert collect.returncode == 2 and "order 1 (o1) is lost: it is never sent again" in collect.stderr
    assert cli.posts_per_order() == {1: 1}


def test_a_redirect_is_never_followed_and_the_trap_never_sees_the_token(cli: Cli) -> None:
    cli.fake.script("submit", "redirect", status=307)
    done = cli.run("send", str(cli.manifest()), "--live")
    assert done.returncode == 2 and cli.fake.trap.journal == [] and not cli.fake.trap.saw_token


def test_lost_then_resolve_job_then_a_resume_collects_it_without_sending_again(cli: Cli) -> None:
    manifest = str(cli.manifest())
    cli.fake.script("submit", "drop_after_create")
    cli.run("send", manifest, "--live")
    record = str(cli.only_record())
    (uuid,) = cli.fake.jobs
    done = cli.run("resolve", record, "1", "--job", uuid)
    assert done.returncode == 0 and "a resume collects it" in done.stdout
    again = cli.run("send", manifest, "--live", "--resume", record, "--max-order", "2")
    assert again.returncode == 0, again.stderr
    assert cli.posts_per_order() == {1: 1, 2: 1}
    rows = [json.loads(x) for x in cli.run("jobs", record, "--json").stdout.splitlines()]
    assert [r["outcome"] for r in rows] == ["completed", "completed"]


def test_lost_then_resolve_none_unblocks_a_new_run(cli: Cli) -> None:
    manifest = str(cli.manifest())
    cli.fake.script("submit", "drop")
    cli.run("send", manifest, "--live")
    record = str(cli.only_record())
    assert cli.run("resolve", record, "o1", "--none").returncode == 0
    assert cli.run("resolve", record, "o1", "--none").returncode == 2  # already decided
    assert cli.run("send", manifest, "--live").returncode == 0


def test_resolve_needs_exactly_one_option(cli: Cli) -> None:
    cli.run("send", str(cli.manifest()), "--live")
    record = str(cli.only_record())
    for args in ([], ["--none", "--expired"]):
        done = cli.run("resolve", record, "1", *args)
        assert done.returncode == 2 and "exactly one" in one_line(done.stderr)


def test_a_wait_time_out_ends_the_call_and_a_resume_collects(cli: Cli) -> None:
    cli.fake.path = ("PENDING",)
    manifest = str(cli.manifest(orders=1, wait=1))
    done = cli.run("send", manifest, "--live")
    assert done.returncode == 1 and "Stopped (wait)" in done.stderr
    (uuid,) = cli.fake.jobs
    assert f"Under way at the stop: order 1 (o1), job {uuid}" in done.stderr
    assert cli.run("send", manifest, "--live").returncode == 2  # an open order blocks a new run on its site
    cli.fake.jobs[uuid].path = ("PENDING", "COMPLETED")
    record = str(cli.only_record())
    again = cli.run("send", manifest, "--live", "--resume", record)
    assert again.returncode == 0, again.stderr
    assert cli.posts_per_order() == {1: 1}


def test_status_error_after_missed_polls_keeps_the_order_open(cli: Cli) -> None:
    cli.fake.script("status", "server_error", times=200, status=503)
    done = cli.run("send", str(cli.manifest(orders=1, wait=1)), "--live")
    assert done.returncode == 1 and "Stopped (status_error)" in done.stderr


def test_a_malformed_result_is_a_result_error(cli: Cli) -> None:
    cli.fake.script("result", "malformed_result")
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    assert done.returncode == 1 and "Stopped (result_error)" in done.stderr


def test_no_result_right_after_completed_is_asked_again(cli: Cli) -> None:
    cli.fake.script("result", "no_result_yet", times=2)
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    assert done.returncode == 0, done.stderr


def test_a_record_write_failure_prints_the_job_to_write_down_exit_3(cli: Cli) -> None:
    # start and submitting are written; the submitted line fails, as a full disk would
    done = cli.run("send", str(cli.manifest()), "--live", spec={"fail_after_lines": 2})
    assert done.returncode == 3
    (uuid,) = cli.fake.jobs
    assert "RECORD WRITE FAILED (" in done.stderr and f"order 1 (o1), job {uuid}" in done.stderr
    assert cli.posts_per_order() == {1: 1} and len(cli.fake.requests("status")) == 0


def test_the_budget_counts_every_record_of_the_site(cli: Cli) -> None:
    # Each job measures 2.5 s. Alone, the second run fits (2.5 + 60 <= 64); with the first record it does not.
    manifest = str(cli.manifest(orders=1, limit=60, budget=64))
    assert cli.run("send", manifest, "--live").returncode == 0
    done = cli.run("send", str(cli.manifest(orders=2, limit=60, budget=64, name="second")), "--live")
    assert done.returncode == 1 and "Stopped (budget)" in done.stderr
    assert sum(cli.posts_per_order().values()) == 2


def test_check_live_asks_the_site_with_the_token(cli: Cli) -> None:
    done = cli.run("check", "--live", "--device", "Q5")
    assert done.returncode == 0 and "token is accepted" in done.stdout
    refused = cli.run("check", "--live", MQSS_TOKEN="wrong-token-0123456789")
    assert refused.returncode == 2 and "refused" in refused.stdout
    assert cli.fake.job_making_requests() == 0


def test_config_file_and_variables_are_read(cli: Cli) -> None:
    cli.config(f'records = "{cli.tmp / "elsewhere"}"\n')  # absolute: a relative folder is refused (issue 10)
    done = cli.run("check")
    assert f"records: {cli.tmp / 'elsewhere'}" in done.stdout
    cli.config("nonsense = 1\n")
    bad = cli.run("check")
    assert bad.returncode == 2 and "nonsense" in one_line(bad.stderr)



def test_max_order_beyond_the_manifest_is_one_line_exit_2(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest(orders=2)), "--live", "--max-order", "3")
    assert done.returncode == 2 and "has 2 order(s)" in one_line(done.stderr)
    assert cli.fake.journal == []


def test_the_dry_run_imports_the_rules_file_without_the_token(cli: Cli) -> None:
    (cli.tmp / "rules.py").write_text("import os\nassert 'MQSS_TOKEN' not in os.environ\n")
    ok = cli.run("send", str(cli.manifest(extra='rules = "rules.py"')))
    assert ok.returncode == 0, ok.stderr
    (cli.tmp / "rules.py").write_text("this is not python\n")
    bad = cli.run("send", str(cli.manifest(extra='rules = "rules.py"')))
    assert bad.returncode == 2 and "rules file" in one_line(bad.stderr)


def test_an_error_in_the_rules_file_during_a_live_call_is_exit_3_with_a_stop_line(cli: Cli) -> None:
    (cli.tmp / "rules.py").write_text("def after_result(order):\n    raise ValueError('oops')\n")
    done = cli.run("send", str(cli.manifest(orders=1, extra='rules = "rules.py"')), "--live")
    assert done.returncode == 3 and "internal error: ValueError: oops" in done.stderr
    assert "Traceback" not in done.stderr
    last = cli.lines(cli.only_record())[-1]
    assert (last["type"], last["reason"]) == ("stop", "program")
