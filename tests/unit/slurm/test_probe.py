"""``SlurmProbe`` over stub clients (sh scripts standing in for scontrol and sacct): what each answer is
reported as. The real Slurm's answers are in tests/e2e/jobs/test_check.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmClusterConfig
from dunscaith.adapters.scheduler.slurm.probe import SlurmProbe
from dunscaith.domain.model.jobs.check import Result

UP = 'echo "Slurmctld(primary) at ctl1 is UP"'
SHOW = {"slurmdbd": 'echo "AccountingStorageType   = accounting_storage/slurmdbd"',
        "none": 'printf "AccountingStorageType   = accounting_storage/none\\nMinJobAge = 300 sec\\n"'}


def probe(tmp_path: Path, accounting: bool | None = None, timeout: float = 5, **scripts: str) -> SlurmProbe:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    conf = tmp_path / "slurm.conf"
    conf.write_text("SlurmctldHost=ctl1(10.0.0.1)\nSlurmctldPort=6900\n")
    return SlurmProbe(SlurmClusterConfig(bin_dir=bin_dir, env={"SLURM_CONF": str(conf)}, accounting=accounting),
                      timeout=timeout)


def test_a_controller_that_is_down_fails_naming_it(tmp_path: Path) -> None:
    found = probe(tmp_path, scontrol='echo "Slurmctld(primary) at ctl1 is DOWN"; exit 1').controller()
    assert found.result is Result.FAILED
    assert found.detail.startswith("slurmctld (primary) at ctl1:6900 is DOWN (from ")


def test_a_controller_that_does_not_answer_in_time_fails_quoting_the_client(tmp_path: Path) -> None:
    go = tmp_path / "never"
    found = probe(tmp_path, timeout=0.5, scontrol=f'echo "retrying" >&2; while [ ! -e {go} ]; do sleep 0.05; done'
                  ).controller()
    assert found.result is Result.FAILED
    assert found.detail == "the controller at ctl1(10.0.0.1):6900 did not answer `scontrol ping` within 0.5 s; " \
                           "it said: retrying"


def test_a_slurm_conf_that_cannot_be_read_fails_before_any_client_runs(tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    checked = probe(tmp_path, scontrol=f"touch {ran}; {UP}")
    checked.config = SlurmClusterConfig(bin_dir=tmp_path / "bin", env={"SLURM_CONF": str(tmp_path / "missing")})
    found = checked.controller()
    assert found.result is Result.FAILED and "cannot be read (no such file)" in found.detail
    assert not ran.exists()


def test_a_controller_that_answers_passes(tmp_path: Path) -> None:
    found = probe(tmp_path, scontrol=UP).controller()
    assert found.result is Result.OK and found.detail.startswith("slurmctld (primary) at ctl1:6900 answers")


@pytest.mark.parametrize(("accounting", "sacct", "result", "words"), [
    (None, "echo 'sacct: error: slurmdbd: Connection refused' >&2; exit 1", Result.FAILED, "Connection refused"),
    (True, "exit 0", Result.OK, "sacct answers"),
    (None, "exit 0", Result.OK, "AccountingStorageType=accounting_storage/slurmdbd"),
])
def test_accounting_kept_must_answer(tmp_path: Path, accounting: bool | None, sacct: str, result: Result,
                                     words: str) -> None:
    found = probe(tmp_path, accounting, scontrol=SHOW["slurmdbd"], sacct=sacct).accounting()
    assert found.result is result and words in found.detail


def test_accounting_not_kept_is_said_and_is_not_a_failure(tmp_path: Path) -> None:
    found = probe(tmp_path, scontrol=SHOW["none"], sacct="exit 1").accounting()
    assert found.result is Result.NOT_KEPT and found.result.passed
    assert "accounting_storage/none" in found.detail and "MinJobAge 300 s" in found.detail
    off = probe(tmp_path, False, scontrol="exit 1", sacct="exit 1").accounting()
    assert off.result is Result.NOT_KEPT and "accounting = false" in off.detail
