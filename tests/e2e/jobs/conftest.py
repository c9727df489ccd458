from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli
from tests.infra.slurm import SlurmTestCluster, SlurmUnavailable, shared_cluster


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    (tmp_path / "home").mkdir()
    return Cli(tmp_path)


@pytest.fixture(scope="module")
def slurm() -> SlurmTestCluster:
    try:
        return shared_cluster()
    except SlurmUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def on_slurm(cli: Cli, slurm: SlurmTestCluster) -> Cli:
    """A private home whose configuration has the test Slurm as cluster ``test``."""
    config = cli.tmp / "home" / ".config" / "dunscaith"
    config.mkdir(parents=True)
    env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in slurm.env.items())
    (config / "config.toml").write_text(f'[clusters.test]\nadapter = "slurm"\nenv = {{ {env} }}\n')
    return cli
