"""Where the controller is, read from the cluster's slurm.conf (never asked of the controller)."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.scheduler.slurm.controller import controller


def test_a_slurm_conf_that_is_not_there_is_said_with_what_the_clients_then_do(tmp_path: Path) -> None:
    found = controller({"SLURM_CONF": str(tmp_path / "slurm.cnof")})
    assert found.conf_problem == "no such file"
    line = found.waiting("sbatch", 10, 120)
    assert line.startswith("waiting for sbatch (no answer for 10 s; timeout 120 s): the cluster's slurm.conf ")
    assert "look for it for 60 s, then fail; check SLURM_CONF in the cluster's env" in line


def test_a_directory_given_as_slurm_conf_cannot_be_read(tmp_path: Path) -> None:
    assert controller({"SLURM_CONF": str(tmp_path)}).conf_problem == "a directory, not a file"


def test_the_controller_is_the_first_slurmctldhost_on_the_slurmctldport(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("# a comment\nClusterName=big\nSlurmctldHost=ctl1(10.0.0.1)\nSlurmctldHost=ctl2\n"
                    "slurmctldport=6900\n")
    found = controller({"SLURM_CONF": str(conf)})
    assert found.words() == "the controller at ctl1(10.0.0.1):6900"
    assert found.waiting("squeue", 10, 60) == ("waiting for squeue (the controller at ctl1(10.0.0.1):6900 has not "
                                               "answered for 10 s; timeout 60 s)")


def test_an_older_conf_names_its_controlmachine_and_the_default_port(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("ControlMachine=head\n")
    assert controller({"SLURM_CONF": str(conf)}).words() == "the controller at head:6817"
    conf.write_text("ClusterName=x\n")  # configless sites, an Include: no host named here
    assert controller({"SLURM_CONF": str(conf)}).words() == f"the controller of {conf}"
