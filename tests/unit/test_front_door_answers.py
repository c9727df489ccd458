"""What the front door answers itself, before typer (issue 26: ``--version``; issue 24: a TAB after a job
command or ``--cluster``), and which words of a completion request it leaves to typer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dunscaith.domain.model.version import VERSION
from dunscaith.entrypoints.dunscaith import completion, front_door, routing

PROBE = ("import os, sys; sys.argv = ['dunscaith', *sys.argv[1:]]\n"
         "def _exit(code):\n"  # a path that ends at once (end_now) ends here too, so the probe can look
         "    raise SystemExit(code)\n"
         "os._exit = _exit\n"
         "from dunscaith.entrypoints.dunscaith.front_door import main\n"
         "try:\n"
         "    main()\n"
         "except SystemExit:\n"
         "    pass\n"
         "sys.stdout.flush()\n"
         "heavy = {'typer', 'pydantic', 'pydantic_settings', 'dependency_injector', 'sqlite3'}\n"
         "print(sorted({m.split('.')[0] for m in sys.modules} & heavy), file=sys.stderr)\n")


def _front_door(tmp_path: Path, *argv: str, **env: str) -> tuple[str, list[str]]:
    """What the front door prints for ``argv``, and which heavy packages it imported meanwhile."""
    (tmp_path / "home" / ".config" / "dunscaith" / "jobs").mkdir(parents=True, exist_ok=True)
    (tmp_path / "home" / ".config" / "dunscaith" / "jobs" / "alpha").write_text("{}")
    whole = {k: v for k, v in os.environ.items() if not k.startswith(("DUNSCAITH_", "_DUNSCAITH", "XDG_"))}
    whole.update(HOME=str(tmp_path / "home"), **env)
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=whole, capture_output=True, text=True,
                          timeout=60, check=False)
    loaded: list[str] = eval(done.stderr.strip().splitlines()[-1])
    return done.stdout, loaded


def test_version_is_answered_from_the_constant_without_typer(tmp_path: Path) -> None:
    assert _front_door(tmp_path, "--version") == (f"dunscaith {VERSION}\n", [])


def test_a_job_name_is_completed_without_typer_nor_the_settings(tmp_path: Path) -> None:
    shown = _front_door(tmp_path, _DUNSCAITH_COMPLETE="complete_bash", COMP_WORDS="dunscaith status ",
                        COMP_CWORD="2")
    assert shown == ("alpha\n", [])


def test_a_command_name_is_left_to_typer(tmp_path: Path) -> None:
    shown, loaded = _front_door(tmp_path, _DUNSCAITH_COMPLETE="complete_bash", COMP_WORDS="dunscaith sta",
                                COMP_CWORD="1")
    assert shown.split() == ["status"] and "typer" in loaded


@pytest.mark.parametrize(("args", "incomplete", "kind"), [
    (["status"], "", "jobs"),
    (["status", "--json"], "al", "jobs"),
    (["supervise", "-f"], "", "jobs"),
    (["status", "alpha"], "", None),  # the job is given: nothing more to name
    (["status"], "--", None),  # an option: typer's
    (["logs", "--attempt"], "", None),  # an option's value: typer's
    (["submit", "--cluster"], "h", "clusters"),
    (["list", "--json", "--cluster"], "", "clusters"),
    (["check"], "", "clusters"),
    (["stop", "--cluster", "hpc", "--emergency"], "", "jobs"),
    (["stop", "--cluster", "hpc", "alpha"], "", None),
    (["status", "--cluster"], "", None),  # status has no --cluster
    ([], "st", None),  # a command's name: typer's
    (["config"], "", None),
])
def test_which_words_are_names(args: list[str], incomplete: str, kind: str | None) -> None:
    assert completion.wanted(args, incomplete) == kind


def test_every_routed_command_completes_its_job_with_the_same_flags() -> None:
    for command, flags in routing.ROUTED.items():
        assert completion.JOB_COMMANDS[command] == flags


def test_the_front_door_names_typer_s_completion_variable() -> None:
    assert front_door.COMPLETE_VAR == completion.COMPLETE_VAR == f"_{front_door.PROG.upper()}_COMPLETE"


def test_a_quoted_word_and_an_open_quote_are_split_as_a_shell_would() -> None:
    assert completion.request({"_DUNSCAITH_COMPLETE": "complete_zsh",
                               "_TYPER_COMPLETE_ARGS": "dunscaith status 'a b"}) == ("zsh", ["status"], "a b")
    assert completion.request({"_DUNSCAITH_COMPLETE": "complete_bash", "COMP_WORDS": "dunscaith cancel \"x y\" ",
                               "COMP_CWORD": "3"}) == ("bash", ["cancel", "x y"], "")
    assert completion.request({"_DUNSCAITH_COMPLETE": "source_bash"}) is None  # the script itself: typer's
