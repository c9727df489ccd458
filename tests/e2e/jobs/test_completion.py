"""Issue 24, completion of names: a TAB after a job command offers the jobs of the pointer folder, after
``--cluster`` (and ``check``) the configured clusters, in bash, zsh and fish. Each request is what the shell's
completion script sends (typer's protocol: ``_DUNSCAITH_COMPLETE=complete_SHELL`` and the line so far), run
against the real console script, and the answer is what the shell reads."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.jobs.cli import DUNSCAITH, Cli

pytestmark = pytest.mark.slow


@pytest.fixture
def home(cli: Cli) -> Cli:
    """A home with one job this host ran (alpha), a job of another login node (beta-remote), and a Slurm
    cluster in the configuration."""
    assert cli.run("submit", "--name", "alpha", "--", "true").returncode == 0
    cli.pointer_of_another_host("beta-remote", "running")
    config = cli.tmp / "home" / ".config" / "dunscaith" / "config.toml"
    config.write_text('[clusters.hpc]\nadapter = "slurm"\n')
    assert cli.run("config", "show").returncode == 0  # a configuration the app itself takes
    return cli


def _ask(cli: Cli, shell: str, line: str, **more: str) -> subprocess.CompletedProcess[str]:
    """What the shell's completion function runs on TAB after ``line`` (the words typed so far)."""
    env = cli.env(_DUNSCAITH_COMPLETE=f"complete_{shell}", **more)
    if shell == "bash":
        words = line.split()
        current = len(words) if line.endswith(" ") else len(words) - 1
        env.update(COMP_WORDS=line, COMP_CWORD=str(current))
    else:
        env.update(_TYPER_COMPLETE_ARGS=line)
    return subprocess.run([DUNSCAITH], env=env, capture_output=True, text=True, timeout=60, cwd=cli.tmp)


def _bash(cli: Cli, line: str) -> list[str]:
    done = _ask(cli, "bash", line)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout.split()


@pytest.mark.parametrize("command", ["status", "cancel", "hold", "logs", "supervise", "reconcile", "stop"])
def test_bash_completes_a_job_command_s_job_from_the_pointers(home: Cli, command: str) -> None:
    assert _bash(home, f"dunscaith {command} ") == ["alpha", "beta-remote"]


def test_bash_completes_the_beginning_typed_and_after_the_command_s_flags(home: Cli) -> None:
    assert _bash(home, "dunscaith status al") == ["alpha"]
    assert _bash(home, "dunscaith cancel --json b") == ["beta-remote"]
    assert _bash(home, "dunscaith status zz") == []


def test_bash_completes_clusters_from_the_configuration(home: Cli) -> None:
    assert _bash(home, "dunscaith submit --cluster ") == ["hpc", "local"]
    assert _bash(home, "dunscaith list --cluster h") == ["hpc"]
    assert _bash(home, "dunscaith check ") == ["hpc", "local"]


def test_commands_and_options_still_complete_as_before(home: Cli) -> None:
    assert _bash(home, "dunscaith sta") == ["status"]
    assert "--json" in _bash(home, "dunscaith status --")


def test_zsh_gets_its_arguments_form_and_files_when_no_name_fits(home: Cli) -> None:
    done = _ask(home, "zsh", "dunscaith status al")
    assert (done.returncode, done.stdout) == (0, "_arguments '*: :((\"alpha\"))'\n")
    done = _ask(home, "zsh", "dunscaith check ")
    assert done.stdout == "_arguments '*: :((\"hpc\"\n\"local\"))'\n"
    assert _ask(home, "zsh", "dunscaith status zz").stdout == "_files\n"


def test_fish_gets_the_names_and_whether_to_offer_them(home: Cli) -> None:
    done = _ask(home, "fish", "dunscaith release ", _TYPER_COMPLETE_FISH_ACTION="get-args")
    assert (done.returncode, done.stdout.split()) == (0, ["alpha", "beta-remote"])
    assert _ask(home, "fish", "dunscaith release a", _TYPER_COMPLETE_FISH_ACTION="is-args").returncode == 0
    assert _ask(home, "fish", "dunscaith release z", _TYPER_COMPLETE_FISH_ACTION="is-args").returncode == 1


def test_no_pointer_folder_and_no_configuration_offer_nothing_and_local(cli: Cli) -> None:
    assert _bash(cli, "dunscaith status ") == []
    assert _bash(cli, "dunscaith submit --cluster ") == ["local"]


def test_a_sweep_s_name_completes_where_a_command_takes_a_sweep(cli: Cli) -> None:
    """Issue 38: docs/completion.md promised sweeps, but a sweep has no pointer of its own (its elements
    have), so only elements completed; now the sweep's name does too, where the command takes one."""
    assert cli.run("submit", "--name", "exp", "--array", "1-2", "--", "true").returncode == 0
    assert cli.run("submit", "--name", "run-3", "--", "true").returncode == 0  # a job's name, not a sweep's
    assert _bash(cli, "dunscaith status e") == ["exp", "exp-1", "exp-2"]
    assert _bash(cli, "dunscaith cancel --json ") == ["exp", "exp-1", "exp-2", "run-3"]
    assert _bash(cli, "dunscaith logs e") == ["exp-1", "exp-2"]  # logs reads one job: no sweep offered
    assert _bash(cli, "dunscaith status r") == ["run-3"]
