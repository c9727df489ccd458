"""Issue 10 (qdevices): bad input is one line and exit 2, never exit 3, and nothing is sent on it."""

from __future__ import annotations

import json
import os
import stat

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
    os.chmod(cli.records, 0o700)  # as qdevices makes it: only older_decisions.jsonl is wrong here
    (site / "older_decisions.jsonl").write_text("{not json\n")
    os.chmod(site / "older_decisions.jsonl", 0o600)
    dry = cli.run("send", str(cli.manifest()))
    live = cli.run("send", str(cli.manifest()), "--live")
    assert "older_decisions.jsonl" in _one_clear_line(dry)
    assert "older_decisions.jsonl" in _one_clear_line(live)
    assert cli.fake.job_making_requests() == 0


def test_site_holder_that_is_a_directory_is_one_line_exit_2(cli: Cli) -> None:
    state = cli.home / ".local" / "state" / "qdevices"
    state.mkdir(parents=True, mode=0o700)  # as qdevices makes it: only the mqss.holder is wrong here
    (state / "mqss.holder").mkdir()
    done = cli.run("send", str(cli.manifest()), "--live")
    assert "mqss.holder" in _one_clear_line(done)
    assert cli.fake.job_making_requests() == 0
    assert "mqss.holder" in _one_clear_line(cli.run("unlock", "mqss", "--host", "elsewhere"))


def test_site_lock_that_is_a_directory_is_one_line_exit_2(cli: Cli) -> None:
    state = cli.home / ".local" / "state" / "qdevices"
    state.mkdir(parents=True, mode=0o700)  # as qdevices makes it: only the mqss.lock is wrong here
    (state / "mqss.lock").mkdir()
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
    manifest = str(cli.manifest(orders=1, wait=1))  # the order stays open after 1 s of failing polls, not 20
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


# --- an empty path argument: Path("") would be ".", the current directory ---------------------------
EMPTY_LINE = "Invalid value for '{}': is empty: give a path (an unset shell variable?)"


def test_an_empty_manifest_is_named_in_one_line_not_read_as_the_current_directory(cli: Cli) -> None:
    for live in ((), ("--live",)):
        done = cli.run("send", "", *live)
        assert _one_clear_line(done) == "qdevices: " + EMPTY_LINE.format("MANIFEST") + "\n"
    assert cli.fake.job_making_requests() == 0 and not cli.records.exists()


def test_an_empty_resume_record_is_named_in_one_line(cli: Cli) -> None:
    done = cli.run("send", str(cli.manifest()), "--live", "--resume", "")
    assert _one_clear_line(done) == "qdevices: " + EMPTY_LINE.format("--resume") + "\n"
    assert cli.fake.job_making_requests() == 0 and not cli.records.exists()


def test_an_empty_record_for_jobs_and_resolve_is_named_in_one_line(cli: Cli) -> None:
    for args in (("jobs", ""), ("jobs", "--json", ""), ("resolve", "", "1", "--none")):
        done = cli.run(*args)
        assert _one_clear_line(done) == "qdevices: " + EMPTY_LINE.format("RECORD") + "\n", args
        if "--json" in args:  # --json gets the same refusal as one JSON object
            assert json.loads(done.stdout)["error"] == {"code": "usage", "message": EMPTY_LINE.format("RECORD"),
                                                        "exit_code": 2}
        else:
            assert done.stdout == ""


def test_a_state_folder_open_to_others_is_refused_and_left_as_it_was(cli: Cli) -> None:
    state = cli.home / ".local" / "state" / "qdevices"
    state.mkdir(parents=True)
    os.chmod(state, 0o755)
    done = cli.run("send", str(cli.manifest()), "--live")
    line = _one_clear_line(done)
    assert f"{state} is open to others (mode 0755)" in line and f"chmod 700 {state}" in line
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o755 and os.listdir(state) == []
    assert cli.fake.job_making_requests() == 0


# Issue 38 ----------------------------------------------------------------------------------------------
def test_a_records_folder_that_is_a_file_refuses_budget_in_one_line(cli: Cli) -> None:
    """`QDEVICES_RECORDS=/etc/passwd qdevices budget mqss` ended in exit 3 (RecordUnreadable)."""
    not_a_folder = cli.tmp / "records-file"
    not_a_folder.write_text("x")
    for args in (("budget", "mqss"), ("budget", "mqss", "--json")):
        done = cli.run(*args, QDEVICES_RECORDS=str(not_a_folder))
        assert _one_clear_line(done) == f"qdevices: the records folder {not_a_folder} is not a folder\n"
    assert not_a_folder.read_text() == "x"


def test_a_records_folder_open_to_others_refuses_budget_and_a_live_send(cli: Cli) -> None:
    """docs/qdevices/configuration.md: an existing folder open to others is refused, never re-moded; budget
    and send --live used a 0777 records folder."""
    cli.records.mkdir(parents=True)
    os.chmod(cli.records, 0o777)
    for args in (("budget", "mqss"), ("send", str(cli.manifest()), "--live"), ("send", str(cli.manifest()))):
        line = _one_clear_line(cli.run(*args))
        assert f"{cli.records} is open to others (mode 0777)" in line and f"chmod 700 {cli.records}" in line, args
    assert stat.S_IMODE(os.stat(cli.records).st_mode) == 0o777 and os.listdir(cli.records) == []
    assert cli.fake.job_making_requests() == 0


def test_a_site_folder_open_to_others_refuses_a_live_send(cli: Cli) -> None:
    site = cli.records / "mqss"
    site.mkdir(parents=True, mode=0o700)
    os.chmod(cli.records, 0o700)
    os.chmod(site, 0o757)
    line = _one_clear_line(cli.run("send", str(cli.manifest()), "--live"))
    assert f"{site} is open to others (mode 0757)" in line
    assert os.listdir(site) == [] and cli.fake.job_making_requests() == 0


def test_a_circuit_or_manifest_that_is_no_regular_file_is_refused_unread(cli: Cli) -> None:
    """A manifest with circuit = "/dev/zero" read for ever in the dry run; a FIFO would block the same way."""
    fifo = cli.tmp / "circuit.fifo"
    os.mkfifo(fifo)
    big = cli.tmp / "big.qasm"
    with open(big, "wb") as f:
        f.truncate((16 << 20) + 1)
    for circuit, why in (("/dev/zero", "not a regular file"), (str(fifo), "not a regular file"),
                         (str(big), f"{(16 << 20) + 1} bytes, more than the {16 << 20} such a file may hold")):
        manifest = cli.manifest(orders=1, circuit=circuit)
        for live in ((), ("--live",)):
            line = _one_clear_line(cli.run("send", str(manifest), *live, timeout=30))
            assert line == f"qdevices: {manifest}: order 1 (o1) circuit {circuit}: cannot be read ({why}; only a " \
                           "regular file of at most 16 MiB is read)\n", line
    for args in (("send", "/dev/zero"), ("budget", "mqss", "--manifest", "/dev/zero")):
        line = _one_clear_line(cli.run(*args, timeout=30))
        assert "/dev/zero: cannot be read" in line and "only a regular file of at most 1 MiB is read" in line, line
    assert cli.fake.job_making_requests() == 0 and not cli.records.exists()


def test_a_missing_home_is_one_line_and_exit_2_and_never_made(cli: Cli) -> None:
    """`HOME=/nonexistent/home` made the home and its parents (0755) for the records and the site lock."""
    gone = cli.tmp / "nonexistent"
    home = gone / "home"
    manifest = cli.manifest(orders=1)
    for args in (("budget", "mqss"), ("send", str(manifest)), ("send", str(manifest), "--live"), ("check",),
                 ("unlock", "mqss", "--host", "elsewhere")):
        done = cli.run(*args, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        assert _one_clear_line(done) == f"qdevices: the home folder {home} does not exist: its folders are made " \
                                        "only inside an existing home, never the home itself; set HOME to your " \
                                        "home folder\n", args
    assert cli.run("send", "--help", HOME=str(home)).returncode == 0
    assert not gone.exists() and cli.fake.job_making_requests() == 0
