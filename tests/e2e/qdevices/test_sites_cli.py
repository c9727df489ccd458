"""qdevices send and check on VLQ and Piast-Q as a user runs them, against the loopback fakes."""

from __future__ import annotations

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow


def test_vlq_a_live_run_sends_each_order_once_after_one_init_job(vlq_cli: Cli) -> None:
    done = vlq_cli.run("send", str(vlq_cli.manifest(orders=2)), "--live")
    assert done.returncode == 0, done.stderr
    assert vlq_cli.posts_per_order() == {1: 1, 2: 1} and vlq_cli.submits_per_order() == {1: 1, 2: 1}
    assert sum(1 for j in vlq_cli.fake.jobs.values() if j.is_init) == 1
    assert all(j.envelope_ok for j in vlq_cli.fake.jobs.values())


def test_vlq_check_live_needs_the_project_and_asks_lexis_and_heappe(vlq_cli: Cli) -> None:
    assert vlq_cli.run("check", "--live", "--site", "vlq").returncode == 2
    done = vlq_cli.run("check", "--live", "--site", "vlq", "--project", "P-QTEST")
    assert done.returncode == 0 and "RunQInit and RunQExecute" in done.stdout, done.stderr
    wrong = vlq_cli.run("check", "--live", "--site", "vlq", "--project", "P-QTEST", LEXIS_TOKEN="w" * 20)
    assert wrong.returncode == 2 and "refused" in wrong.stdout
    assert vlq_cli.fake.requests("create") == []


def test_vlq_a_manifest_without_its_project_is_bad_input(vlq_cli: Cli) -> None:
    path = vlq_cli.manifest(orders=1)
    path.write_text(path.read_text().replace('project = "P-QTEST"\n', ""))
    done = vlq_cli.run("send", str(path))
    assert done.returncode == 2 and "missing project" in done.stderr


def test_piastq_a_live_run_and_check(piastq_cli: Cli) -> None:
    done = piastq_cli.run("send", str(piastq_cli.manifest(orders=2)), "--live")
    assert done.returncode == 0, done.stderr
    assert piastq_cli.posts_per_order() == {1: 1, 2: 1}
    check = piastq_cli.run("check", "--live", "--site", "piastq", "--device", "PIAST-Q")
    assert check.returncode == 0 and "key is accepted" in check.stdout


def test_vlq_a_failed_init_job_is_a_stop_prepare_exit_1_naming_the_init_job(vlq_cli: Cli) -> None:
    vlq_cli.fake.script("info", "server_error")  # the first read of the init job fails
    manifest = str(vlq_cli.manifest(orders=1))
    done = vlq_cli.run("send", manifest, "--live")
    (init,) = [j.id for j in vlq_cli.fake.jobs.values() if j.is_init]
    assert done.returncode == 1 and "Stopped (prepare)" in done.stderr, done.stderr
    assert f"Under way at the stop: order 1 (o1), init job {init}" in done.stderr
    assert vlq_cli.posts_per_order() == {}
    record = str(vlq_cli.only_record())
    again = vlq_cli.run("send", manifest, "--live", "--resume", record, "--max-order", "1")
    assert again.returncode == 0 and vlq_cli.posts_per_order() == {1: 1}, again.stderr
