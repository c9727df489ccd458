"""The lean ``remote run`` reads a command line as the typer command does, and leaves it the rest."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import pytest

from dunscaith.adapters.process.wrapper import LaunchSpec
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.commands import remote
from dunscaith.entrypoints.dunscaith.remote_run import RemoteRoot, RunArgs, own, parse_run_args


class Recorder:
    """A wrapper that records what it was asked to run, and runs nothing."""

    seen: ClassVar[list[tuple[Path, LaunchSpec]]] = []

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def claim(self) -> None:
        pass

    def run(self, spec: LaunchSpec) -> int:
        Recorder.seen.append((self.directory, spec))
        return 7


def _through_typer(argv: list[str]) -> tuple[Path, LaunchSpec]:
    container = RemoteRoot(wrapper=Recorder)
    Recorder.seen.clear()
    # outside standalone mode click hands back the code of typer.Exit
    assert remote.app(args=["run", *argv], prog_name="dunscaith", standalone_mode=False, obj=container) == 7
    return Recorder.seen.pop()


def _through_lean(argv: list[str]) -> tuple[Path, LaunchSpec]:
    parsed = parse_run_args(argv)
    assert parsed is not None
    Recorder.seen.clear()
    assert own(parsed, Recorder) == 7
    return Recorder.seen.pop()


LINES = [
    ["--instance-dir", "d", "--", "true"],
    ["--instance-dir=d", "true", "--env", "X=1"],  # options end at the program: its own are its own
    ["--instance-dir", "d", "--env", "A=1", "--env=B=x=y", "--cwd", "/tmp", "--", "sh", "-c", "echo $A"],
    ["--instance-dir", "first", "--instance-dir", "d", "--cwd=/", "prog", "--", "-x"],  # the last one counts
    ["--instance-dir", "d", "--env", "--", "--", "prog"],  # an option's value is taken as it comes
    ["--instance-dir", "d", "-", "a"],
]


@pytest.mark.parametrize("argv", LINES)
def test_both_paths_read_a_command_line_alike(argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.chdir(tmp_path)
    if "--env" in argv and argv[argv.index("--env") + 1] == "--":
        for path in (_through_lean, _through_typer):
            with pytest.raises(BadInput, match="NAME=VALUE"):
                path(argv)
        return
    assert _through_lean(argv) == _through_typer(argv)


@pytest.mark.parametrize("argv", [
    [], ["--"], ["--instance-dir", "d"], ["--help"], ["--instance-dir", "d", "--help", "x"], ["-h", "x"],
    ["--envx=1", "x"], ["--env"], ["--instance-dir"],
])
def test_help_usage_errors_and_unknown_options_go_to_typer(argv: list[str]) -> None:
    assert parse_run_args(argv) is None


def test_parsed_values() -> None:
    # names as given (str: the lean path imports no pathlib); own() makes them absolute as Path.absolute()
    assert parse_run_args(["--env", "A=1", "--env-file", "f", "--cwd", "c", "p", "q"]) == RunArgs(
        ["p", "q"], None, ["A=1"], "f", "c")


def test_env_file_values_reach_both_paths_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env_file = tmp_path / "env"
    env_file.write_bytes(b"TOKEN=s3cret\0")
    os.chmod(env_file, 0o600)
    argv = ["--instance-dir", "d", "--env-file", str(env_file), "--", "true"]
    lean: Any = _through_lean(argv)
    assert lean == _through_typer(argv) and lean[1].env == {"TOKEN": "s3cret"}
