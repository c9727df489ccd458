"""``dunscaith check CLUSTER`` on the real Slurm (a good cluster, a wrong SLURM_CONF, a controller that is
not there) and on the local scheduler; and submit's line while its first call goes unanswered (issue 22,
item 7)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli, await_condition
from tests.infra.slurm import SlurmTestCluster

pytestmark = [pytest.mark.slow]


def _config(cli: Cli, text: str) -> None:
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(text)


def _wrong_conf(cli: Cli, slurm: SlurmTestCluster) -> None:
    """Cluster ``typo``: SLURM_CONF names a file that is not there; ``down``: a copy whose controller port
    nothing listens on."""
    down = cli.tmp / "down.conf"
    down.write_text("".join("SlurmctldPort=9\n" if line.startswith("SlurmctldPort=") else line
                            for line in slurm.conf.read_text().splitlines(keepends=True)))
    _config(cli, f'[clusters.typo]\nadapter = "slurm"\nenv = {{ SLURM_CONF = "{cli.tmp / "slurm.cnof"}" }}\n'
                 "command_timeout = 12\nsubmit_timeout = 12\nsubmit_timeout_unknown_floor = 12\n"
                 f'[clusters.down]\nadapter = "slurm"\nenv = {{ SLURM_CONF = "{down}" }}\n')


@pytest.mark.slurm
def test_a_cluster_whose_slurm_conf_is_not_there_fails_the_check_at_once_and_nothing_is_sent(
        cli: Cli, slurm: SlurmTestCluster) -> None:
    _wrong_conf(cli, slurm)
    done = cli.run("check", "typo", timeout=30)  # the clients alone would look for the file for 60 s
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:2] == ["FAILED", "controller"]
    assert f"slurm.conf {cli.tmp / 'slurm.cnof'} cannot be read (no such file)" in lines[0]
    assert [line.split()[:2] for line in lines[1:]] == [["-", "accounting"], ["-", "held"]]
    assert "not tried" in lines[2]
    assert done.stderr.startswith("dunscaith: cluster typo (slurm): controller failed: ")


@pytest.mark.slurm
def test_a_controller_that_is_not_there_fails_the_check_with_json(cli: Cli, slurm: SlurmTestCluster) -> None:
    _wrong_conf(cli, slurm)
    done = cli.run("check", "down", "--json", timeout=30)
    assert done.returncode == 1, done.stderr
    answer = json.loads(done.stdout)
    assert answer["cluster"] == "down" and answer["adapter"] == "slurm" and answer["passed"] is False
    assert [(c["check"], c["result"]) for c in answer["checks"]] == [
        ("controller", "failed"), ("accounting", "not-tried"), ("held object", "not-tried")]
    assert ":9 is DOWN" in answer["checks"][0]["detail"]
    assert answer["error"]["code"] == "check-failed" and answer["error"]["exit_code"] == 1


@pytest.mark.slurm
def test_a_good_cluster_passes_every_check_and_its_test_object_is_cancelled_never_started(
        on_slurm: Cli, slurm: SlurmTestCluster) -> None:
    done = on_slurm.run("check", "test", "--json", timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
    answer = json.loads(done.stdout)
    assert answer["passed"] is True and "error" not in answer
    assert [(c["check"], c["result"]) for c in answer["checks"]] == [
        ("controller", "ok"), ("accounting", "ok"), ("held object", "ok")]
    assert "answers" in answer["checks"][0]["detail"] and "sacct answers" in answer["checks"][1]["detail"]
    name = answer["checks"][2]["detail"].split()[1]
    assert name.startswith("dunscaith-check-")
    seen = slurm.run("squeue", f"--name={name}", "--noheader", "--states=all", "--format=%T %r")
    assert seen.stdout.split() == ["CANCELLED", "JobHeldUser"]  # made held, cancelled, never released
    plain = on_slurm.run("check", "test", timeout=60)
    assert plain.returncode == 0 and [line.split()[:2] for line in plain.stdout.splitlines()] == [
        ["ok", "controller"], ["ok", "accounting"], ["ok", "held"]]


def test_the_local_scheduler_passes_every_check(cli: Cli) -> None:
    done = cli.run("check", "local", timeout=60)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert [line.split()[:2] for line in done.stdout.splitlines()] == [
        ["ok", "controller"], ["ok", "accounting"], ["ok", "held"]]
    assert "and cancelled it" in done.stdout


def test_an_unknown_cluster_is_bad_input(cli: Cli) -> None:
    done = cli.run("check", "nosuch", "--json")
    assert done.returncode == 2 and "nosuch" in done.stderr
    assert json.loads(done.stdout)["error"]["code"] == "bad-input"


@pytest.mark.slurm
def test_submit_says_what_its_first_unanswered_call_waits_for_while_it_waits(
        cli: Cli, slurm: SlurmTestCluster, tmp_path: Path) -> None:
    _wrong_conf(cli, slurm)
    submit = cli.start("submit", "--cluster", "typo", "--name", "typo-wait", "--", "true")
    said: list[str] = []
    try:
        assert submit.stderr is not None

        def waiting() -> bool:
            line = submit.stderr.readline()  # type: ignore[union-attr]
            said.append(line)
            return line.startswith("dunscaith: waiting for ") or not line

        await_condition(waiting, 60, "the line about the unanswered call")
        line = said[-1]
        # scontrol show config (the cluster's MessageTimeout, for sbatch's timeout) is the first call
        assert line.startswith("dunscaith: waiting for scontrol show config (no answer for 10 s; timeout 12 s): "), said
        assert f"slurm.conf {cli.tmp / 'slurm.cnof'} cannot be read (no such file)" in line
        assert "check SLURM_CONF in the cluster's env" in line
        assert submit.poll() is None  # said while it waits
    finally:
        submit.send_signal(signal.SIGTERM)
        submit.wait(120)
