"""Issue 10 (qdevices): bad input is one line and exit 2, never exit 3, and nothing is sent on it."""

from __future__ import annotations

import os

from tests.e2e.qdevices.conftest import Cli


def _one_clear_line(done, exit_code: int = 2) -> str:  # type: ignore[no-untyped-def]
    assert done.returncode == exit_code, (done.returncode, done.stderr)
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return str(done.stderr)


def test_qdevices_records_naming_a_file_is_one_line_exit_2(cli: Cli) -> None:
    not_a_folder = cli.tmp / "records-file"
    not_a_folder.write_text("x")
    done = cli.run("send", str(cli.manifest()), "--live", QDEVICES_RECORDS=str(not_a_folder))
    stderr = _one_clear_line(done)
    assert str(not_a_folder) in stderr
    assert cli.fake.job_making_requests() == 0 and not_a_folder.read_text() == "x"


def test_qdevices_records_below_a_file_is_one_line_exit_2(cli: Cli) -> None:
    (cli.tmp / "file").write_text("x")
    done = cli.run("send", str(cli.manifest()), "--live", QDEVICES_RECORDS=str(cli.tmp / "file" / "records"))
    _one_clear_line(done)
    assert cli.fake.job_making_requests() == 0


def test_damaged_older_decisions_on_a_live_send_is_one_line_exit_2(cli: Cli) -> None:
    site = cli.records / "mqss"
    site.mkdir(parents=True, mode=0o700)
    (site / "older_decisions.jsonl").write_text("{not json\n")
    os.chmod(site / "older_decisions.jsonl", 0o600)
    dry = cli.run("send", str(cli.manifest()))
    live = cli.run("send", str(cli.manifest()), "--live")
    assert "older_decisions.jsonl" in _one_clear_line(dry)
    assert "older_decisions.jsonl" in _one_clear_line(live)
    assert cli.fake.job_making_requests() == 0


def test_site_holder_that_is_a_directory_is_one_line_exit_2(cli: Cli) -> None:
    state = cli.home / ".local" / "state" / "qdevices"
    (state / "mqss.holder").mkdir(parents=True)
    done = cli.run("send", str(cli.manifest()), "--live")
    assert "mqss.holder" in _one_clear_line(done)
    assert cli.fake.job_making_requests() == 0
    assert "mqss.holder" in _one_clear_line(cli.run("unlock", "mqss", "--host", "elsewhere"))


def test_site_lock_that_is_a_directory_is_one_line_exit_2(cli: Cli) -> None:
    state = cli.home / ".local" / "state" / "qdevices"
    (state / "mqss.lock").mkdir(parents=True)
    done = cli.run("send", str(cli.manifest()), "--live")
    assert "mqss.lock" in _one_clear_line(done)
    assert cli.fake.job_making_requests() == 0


def test_status_body_nested_200000_deep_is_a_status_error_not_exit_3(cli: Cli) -> None:
    cli.fake.script("status", "answer", status=200, raw=b"[" * 200_000)
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    assert "Stopped (status_error)" in _one_clear_line(done, exit_code=1)  # an answer that ends the wait
    assert cli.posts_per_order() == {1: 1}


def test_result_nested_200000_deep_is_a_result_error_not_exit_3(cli: Cli) -> None:
    cli.fake.script("result", "malformed_result", body={"result": "[" * 200_000})
    done = cli.run("send", str(cli.manifest(orders=1)), "--live")
    assert done.returncode in (1, 2), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert cli.posts_per_order() == {1: 1}


def test_resume_refuses_a_symlinked_record(cli: Cli) -> None:
    manifest = str(cli.manifest(orders=1))
    cli.fake.script("status", "server_error", times=1000)
    assert cli.run("send", manifest, "--live").returncode == 1  # the order stays open: a resume would collect
    record = cli.only_record()
    link = cli.tmp / "link.jsonl"
    link.symlink_to(record)
    before = record.read_bytes()
    done = cli.run("send", manifest, "--live", "--resume", str(link))
    assert "symbolic link" in _one_clear_line(done)
    assert record.read_bytes() == before and cli.posts_per_order() == {1: 1}


def test_config_toml_directory_refuses_a_live_run_before_sending(cli: Cli) -> None:
    (cli.tmp / "cfg" / "qdevices" / "config.toml").mkdir(parents=True)
    done = cli.run("send", str(cli.manifest()), "--live")
    assert "is a directory" in _one_clear_line(done)
    assert cli.fake.job_making_requests() == 0 and not cli.records.exists()


def test_misspelt_qdevices_poll_second_refuses_the_live_run(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest()), "--live", QDEVICES_POLL_SECOND="1")
    assert "QDEVICES_POLL_SECONDS" in _one_clear_line(done)
    assert cli.fake.job_making_requests() == 0
