"""The Slurm adapter alone turns a job's needs into sbatch options, and owns the options it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.adapters.scheduler.slurm.batch_script import sbatch_args
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.objects import CreateOutcome, ObjectSpec
from dunscaith.domain.model.jobs.resources import Resources


def test_needs_become_sbatch_options_before_the_specs_own_and_dunscaiths_last() -> None:
    needs = Resources(cpus=4, memory_mb=8192, time_limit_s=86401, gpus=2, gpu_type="a100", queue="short",
                      account="proj", qos="high", export="NONE")
    spec = ObjectSpec(JobId("j"), Nonce("n"), command=("true",), resources=needs, options=("--constraint=x",))
    assert sbatch_args(spec, None) == [
        "--partition=short", "--time=1-00:00:01", "--mem=8192M", "--cpus-per-task=4", "--gpus=a100:2",
        "--account=proj", "--qos=high", "--export=NONE", "--constraint=x",
        "--parsable", "--hold", "--job-name=j", "--comment=n"]


@pytest.mark.parametrize("option", ["--hold", "-vH", "--ho", "--job-name=x", "--array=1-3"])
def test_an_option_dunscaith_owns_is_refused_before_recording_and_before_sending(option: str, tmp_path: Path) -> None:
    scheduler = SlurmCliScheduler(SlurmClusterConfig(bin_dir=tmp_path))  # no sbatch there: nothing could run
    said = scheduler.refusal(Resources(), (option,))
    assert said is not None and "is not allowed" in said
    answer = scheduler.create_held(ObjectSpec(JobId("j"), Nonce("n"), command=("true",), options=(option,)))
    assert answer.outcome is CreateOutcome.REFUSED and "nothing was sent" in answer.detail


def test_slurm_honours_every_need() -> None:
    needs = Resources(cpus=1, memory_mb=1, time_limit_s=1, gpus=1, queue="q", account="a", qos="q", export="ALL")
    assert SlurmCliScheduler(SlurmClusterConfig()).refusal(needs, ("--constraint=x",)) is None
