"""Issues 21 and 37: a scheduler kind added as a test fixture (tests/fixtures/pbs) is its package plus one
registration line (``kinds.scheduler_kind``), with no edit to submit, the commands, the container, the
plain roots or the domain. tests/e2e/jobs/test_add_a_kind.py runs it through the real front door."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.requests import refusal
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Action, fold_events
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.app import app
from dunscaith.entrypoints.dunscaith.root import kinds
from dunscaith.entrypoints.dunscaith.root.container import Container
from dunscaith.entrypoints.dunscaith.root.settings import load_settings
from tests.fixtures.pbs import KIND, PbsClusterSettings, PbsScheduler


@pytest.fixture
def with_pbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Container:
    for name in list(__import__("os").environ):
        if name.startswith("DUNSCAITH_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()  # a home that exists: a missing one is refused (issue 38)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "config" / "dunscaith").mkdir(parents=True)
    (tmp_path / "config" / "dunscaith" / "config.toml").write_text(
        f'[records]\nroot = "{tmp_path / "records"}"\n'
        "[supervise]\npoll = 0.01\npoll_max = 0.02\nwait = 0.05\n"
        '[clusters.hpc]\nadapter = "pbs"\nserver = "pbs1.example"\n')
    monkeypatch.setitem(kinds.SCHEDULER_KINDS, "pbs", KIND)  # its one registration line
    monkeypatch.setattr(PbsScheduler, "opened", [])
    return Container()


def invoke(container: Container, *args: str) -> Any:
    result = CliRunner().invoke(app, list(args), obj=container, standalone_mode=False)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


def test_a_job_on_the_added_scheduler_gets_its_needs_in_that_schedulers_words(with_pbs: Container) -> None:
    result = invoke(with_pbs, "submit", "--cluster", "hpc", "--name", "on-pbs", "-c", "2", "--mem", "4G",
                    "-t", "10:00", "-p", "short", "-A", "proj", "--scheduler-option=-m=abe", "--", "true")
    assert result.return_value == 0, result.output
    assert "outcome: succeeded" in result.output
    [pbs] = PbsScheduler.opened
    assert pbs.settings.server == "pbs1.example"
    [qsub] = pbs.submitted
    assert qsub[:8] == ["-h", "-N", "on-pbs", "-q", "short", "-l", "ncpus=2,mem=4096mb,walltime=00:10:00", "-A"]
    assert qsub[8:10] == ["proj", "-m=abe"]
    shown = invoke(with_pbs, "status", "on-pbs")
    assert "cluster hpc (pbs)" in shown.output
    assert "resources: cpus=2 memory=4G time=00:10:00 queue=short account=proj -m=abe" in shown.output
    assert with_pbs.adapters.store().read(JobId("on-pbs")).events  # recorded like any other job


@pytest.mark.parametrize(("args", "says"), [
    (["--qos", "high"], "the pbs scheduler cannot honour --qos (qos)"),
    (["--export", "NONE"], "the pbs scheduler cannot honour --export (export)"),
    (["--scheduler-option=-h"], "qsub option -h is not allowed"),
    (["--sbatch=-h"], "qsub option -h is not allowed"),  # the flag's older name
    (["-c", "0"], "--cpus-per-task '0': a whole number"),  # the domain's own check, whatever the scheduler
])
def test_what_the_added_scheduler_cannot_honour_is_refused_by_it_before_anything_is_recorded(
        with_pbs: Container, args: list[str], says: str) -> None:
    with pytest.raises(BadInput) as refused:  # the app's runner prints it as one line, exit 2
        invoke(with_pbs, "submit", "--cluster", "hpc", "--name", "refused", *args, "--", "true")
    assert says in str(refused.value) and "\n" not in str(refused.value)
    assert all(not pbs.submitted for pbs in PbsScheduler.opened)
    listed = invoke(with_pbs, "list", "--json")
    assert '"jobs": []' in listed.output


def test_the_added_kinds_table_is_validated_by_its_own_model(with_pbs: Container, tmp_path: Path) -> None:
    config = tmp_path / "config" / "dunscaith" / "config.toml"
    config.write_text('[clusters.hpc]\nadapter = "pbs"\nserver = "s"\ncommand_timeout = 3\n')
    with pytest.raises(BadInput, match=r"clusters\.hpc\.command_timeout: not a key of a table with adapter = 'pbs'"):
        load_settings()
    config.write_text('[clusters.hpc]\nadapter = "pbs"\n')  # its own required key
    with pytest.raises(BadInput, match=r"clusters\.hpc\.server"):
        load_settings()
    config.write_text('[clusters.hpc]\nadapter = "pbs"\nserver = "s"\ndefault_queue = "q"\n')
    assert load_settings().cluster("hpc") == PbsClusterSettings(adapter="pbs", server="s", default_queue="q")


def test_without_its_registration_line_the_kind_is_refused_naming_the_kinds(
        with_pbs: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(kinds.SCHEDULER_KINDS, "pbs")
    with pytest.raises(BadInput, match=r"clusters\.hpc\.adapter: .*'local', 'slurm' or 'gridengine'"):
        load_settings()


def test_what_the_added_kind_declares_it_cannot_do_is_refused_by_the_domain(with_pbs: Container) -> None:
    spec = JobSpec(JobId("on-pbs"), "hpc", "pbs", ("true",))
    state = fold_events([(datetime(2026, 1, 1, tzinfo=UTC), ev.JobRecorded.of(spec, StoreIdentity("memory", "m")))])
    assert refusal(state, Action.HOLD, kinds.capabilities("pbs")) == "the pbs test scheduler cannot hold a job"
    assert refusal(state, Action.HOLD, kinds.capabilities("slurm")) is None  # the same job on a kind that can
