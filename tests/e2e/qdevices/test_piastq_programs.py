"""Piast-Q as PCSS's client speaks it, VLQ's names, `jobs` naming what blocks, and `budget`: as a user runs them."""

from __future__ import annotations

import json

import pytest

from tests.e2e.qdevices.conftest import Cli
from tests.fakes.piastq_server import BELL_AQT
from tests.fakes.vlq_server import CONFIGURING

pytestmark = pytest.mark.slow


def test_piastq_an_aqt_circuit_and_an_openqasm_one_each_run_once_to_the_end(piastq_cli: Cli) -> None:
    """The fake takes only what pcss-qapi 0.3.2 sends: custom1, the AQT circuit, wait_timeout."""
    for name, circuit in (("aqt", "bell.aqt.json"), ("qasm", "bell.qasm")):
        done = piastq_cli.run("send", str(piastq_cli.manifest(orders=2, name=name, circuit=circuit)), "--live")
        assert done.returncode == 0, done.stderr
    assert piastq_cli.posts_per_order() == {1: 2, 2: 2}  # two runs, each order of each sent once
    bodies = [json.loads(entry.body) for entry in piastq_cli.fake.requests("submit")]
    assert all(b["format"] == "custom1" and b["wait_timeout"] == 5 for b in bodies)
    assert bodies[0]["program"] == {"repetitions": 11, **BELL_AQT}
    assert {op["operation"] for op in bodies[2]["program"]["quantum_circuit"]} <= {"R", "RZ", "RXX", "MEASURE"}
    for record in piastq_cli.record_paths():
        assert [line["type"] for line in piastq_cli.lines(record)].count("result") == 2


def test_piastq_a_circuit_that_cannot_be_converted_is_refused_by_the_dry_run_and_nothing_is_sent(
        piastq_cli: Cli) -> None:
    (piastq_cli.tmp / "mid.qasm").write_text('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[1];\n'
                                             "measure q[0] -> c[0];\nh q[0];\nmeasure q[0] -> c[0];\n")
    manifest = str(piastq_cli.manifest(orders=1, circuit="mid.qasm"))
    for args in ((), ("--live",)):
        done = piastq_cli.run("send", manifest, *args)
        assert done.returncode == 2, done.stderr
        assert "order 1 (o1) circuit mid.qasm: it cannot be made into AQT's gates" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert piastq_cli.fake.requests("submit") == [] and piastq_cli.record_paths() == []


def test_piastq_the_old_qasm_body_needs_the_setting_and_its_evidence(piastq_cli: Cli) -> None:
    piastq_cli.config('[piastq]\nprogram_format = "qasm"\n')
    done = piastq_cli.run("send", str(piastq_cli.manifest(orders=1, circuit="bell.qasm")))
    assert done.returncode == 2 and "program_format_evidence" in done.stderr, done.stderr
    piastq_cli.config('[piastq]\nprogram_format = "qasm"\nprogram_format_evidence = "PCSS ticket 1"\n')
    piastq_cli.fake.accept_qasm = True
    done = piastq_cli.run("send", str(piastq_cli.manifest(orders=1, circuit="bell.qasm")), "--live")
    assert done.returncode == 0, done.stderr
    (body,) = [json.loads(e.body) for e in piastq_cli.fake.requests("submit")]
    assert body["format"] == "qasm2" and body["program"].startswith("OPENQASM 2.0")


def test_vlq_an_order_name_heappe_would_cut_is_refused_before_anything_is_sent(vlq_cli: Cli) -> None:
    path = vlq_cli.manifest(orders=2)
    text = path.read_text().replace('name = "o1"', f'name = "{"a" * 52}-01"').replace(
        'name = "o2"', f'name = "{"a" * 52}-02"')
    path.write_text(text)
    for args in ((), ("--live",)):
        done = vlq_cli.run("send", str(path), *args)
        assert done.returncode == 2, done.stderr
        assert "55 characters; vlq keeps a job's name whole up to 50" in done.stderr
    assert vlq_cli.fake.requests("create") == [] and vlq_cli.record_paths() == []


def test_jobs_names_a_vlq_order_still_configuring_after_submitjob_as_what_blocks_the_site(vlq_cli: Cli) -> None:
    vlq_cli.fake.path = (CONFIGURING,)  # SubmitJob answers 200; the job stays Configuring
    done = vlq_cli.run("send", str(vlq_cli.manifest(orders=1, wait=1)), "--live")
    assert done.returncode == 1 and "Stopped (wait)" in done.stderr, done.stderr
    jobs = vlq_cli.run("jobs", str(vlq_cli.only_record()))
    assert jobs.returncode == 0 or jobs.returncode == 1, jobs.stderr
    assert "SubmitJob was answered, yet VLQ still shows the job Configuring" in jobs.stdout
    assert "ask IT4I support" in jobs.stdout
    row = json.loads(vlq_cli.run("jobs", "--json", str(vlq_cli.only_record())).stdout.splitlines()[0])
    assert row["state"] == "open" and "Configuring" in row["blocks"]


def test_budget_shows_used_counted_at_the_limit_bound_and_left(cli: Cli) -> None:
    manifest = cli.manifest(orders=2, limit=60, budget=1000)
    assert cli.run("send", str(manifest), "--live").returncode == 0
    cli.fake.script("submit", "drop_after_create")  # the next order is lost: it counts at the limit
    lost = cli.run("send", str(cli.manifest(orders=1, name="second", limit=60, budget=1000)), "--live")
    assert lost.returncode == 2
    figures = json.loads(cli.run("budget", "mqss", "--manifest", str(manifest), "--json").stdout)
    assert figures["site"] == "mqss" and figures["budget"] == 1000 and len(figures["records"]) == 2
    assert figures["at_limit"] == 60 and figures["bound"] == figures["used"] + 60
    assert figures["left"] == 1000 - figures["bound"]
    shown = cli.run("budget", "mqss", "--budget", "1000")
    assert shown.returncode == 0 and "counted at job_seconds_limit (lost, open, no measured time): 60 s" in shown.stdout
    assert f"left {1000 - figures['bound']:g} s" in shown.stdout
    assert cli.run("budget", "nosuch").returncode == 2


def test_check_with_a_manifest_makes_its_programs_and_takes_its_site(piastq_cli: Cli) -> None:
    manifest = str(piastq_cli.manifest(orders=2, circuit="bell.qasm"))
    done = piastq_cli.run("check", "--manifest", manifest)
    assert done.returncode == 0 and "2 order(s), each program made and checked" in done.stdout, done.stderr
    assert "piastq: PCSS_API_KEY is set" in done.stdout
    live = piastq_cli.run("check", "--live", "--manifest", manifest)
    assert live.returncode == 0 and "key is accepted" in live.stdout, live.stderr
    (piastq_cli.tmp / "mid.qasm").write_text('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[1];\ncreg c[1];\n'
                                             "measure q[0] -> c[0];\nh q[0];\nmeasure q[0] -> c[0];\n")
    bad = piastq_cli.run("check", "--manifest", str(piastq_cli.manifest(orders=1, name="bad", circuit="mid.qasm")))
    assert bad.returncode == 2 and "cannot be made into AQT's gates" in bad.stderr
    other = piastq_cli.run("check", "--site", "mqss", "--manifest", manifest)
    assert other.returncode == 2 and "is for site piastq" in other.stderr
    assert piastq_cli.fake.requests("submit") == []
