"""Issue 37, one parser: typer parses every command line of this host's jobs (status, list, submit ...
included), and the command reaches its parts without pydantic nor dependency-injector once the settings
are remembered. typer's own conversion of a parameter (a pydantic ``TypeAdapter``) is taken over, for the
plain types, by ``cli_support._lean_coercion``: the same values, and every wrong value refused in typer's
own words."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from dunscaith.entrypoints.cli_support import new_app, run
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.path_args import path_arg

# What a command line imports, run through the console script's front door: the heavy packages loaded.
PROBE = ("import os, sys; sys.argv = ['dunscaith', *sys.argv[1:]]\n"
         "def _exit(code):\n"  # a path that ends at once (end_now) ends here too, so the probe can look
         "    raise SystemExit(code)\n"
         "os._exit = _exit\n"
         "from dunscaith.entrypoints.dunscaith.front_door import main\n"
         "code = 0\n"
         "try:\n"
         "    main()\n"
         "except SystemExit as exc:\n"
         "    code = exc.code\n"
         "sys.stdout.flush()\n"
         "heavy = {'typer', 'pydantic', 'pydantic_settings', 'dependency_injector', 'click'}\n"
         "print(code, sorted({m.split('.')[0] for m in sys.modules} & heavy), file=sys.stderr)\n")


def _front_door(tmp_path: Path, *argv: str) -> tuple[str, str, list[str]]:
    """stdout, the exit code and the heavy packages the front door imported for ``argv``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DUNSCAITH_", "_DUNSCAITH", "XDG_"))}
    env.update(HOME=str(tmp_path / "home"), DUNSCAITH_RECORDS__ROOT=str(tmp_path / "records"), NO_COLOR="1")
    (tmp_path / "home").mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    code, loaded = done.stderr.strip().splitlines()[-1].split(" ", 1)
    return done.stdout, code, eval(loaded)


def test_every_command_line_is_typer_s_and_imports_no_pydantic_nor_dependency_injector(tmp_path: Path) -> None:
    _front_door(tmp_path, "list")  # the first command validates the settings (pydantic) and remembers them
    shown, code, loaded = _front_door(tmp_path, "submit", "--name", "j1", "--", "true")
    assert (code, loaded) == ("0", ["typer"]) and "Traceback" not in shown
    for argv, exit_code in ((["status", "j1"], "0"), (["status", "--json"], "0"), (["list"], "0"),
                            (["list", "--expand", "--limit", "3"], "0"), (["logs", "j1"], "0"),
                            (["events", "j1", "--json"], "0"), (["status", "nothing-here", "--json"], "2"),
                            (["hold", "j1"], "2"), (["submit", "--name", "j1", "--", "true"], "2")):
        assert _front_door(tmp_path, *argv)[1:] == (exit_code, ["typer"]), argv


def test_a_store_other_than_sqlite_is_opened_from_the_validated_model(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(("DUNSCAITH_", "XDG_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    edge.command_settings()  # validated (pydantic), and remembered
    assert not hasattr(edge.command_settings(), "model_dump")  # the remembered tree, as plain data
    monkeypatch.setenv("DUNSCAITH_RECORDS__BACKEND", "postgresql")
    monkeypatch.setenv("DUNSCAITH_RECORDS__URL", "postgresql://u@localhost:9/db")
    found = edge.command_settings()
    assert hasattr(found, "model_dump") and found.records.backend == "postgresql"
    assert edge.validated(found) is found


def _app() -> typer.Typer:
    app = new_app("")

    @app.command()
    def run(word: str = typer.Argument(...), count: int | None = typer.Option(None, "--count", min=0),
            at_most: int = typer.Option(9, "--at-most", max=9), ratio: float = typer.Option(1.0, "--ratio"),
            where: Path | None = typer.Option(None, "--where", parser=path_arg),
            flag: bool = typer.Option(False, "--flag"), rest: list[str] = typer.Argument(None)) -> None:
        print(repr((word, count, at_most, ratio, where, flag, rest)))

    @app.command()
    def other() -> None:  # two commands: ``run`` is named on the line
        pass

    return app


@pytest.mark.parametrize(("argv", "shown"), [
    (["run", "w"], "('w', None, 9, 1.0, None, False, None)"),
    (["run", "w", "--count", "3", "--flag", "--", "a", "--b"], "('w', 3, 9, 1.0, None, True, ['a', '--b'])"),
    (["run", "w", "--count", "+4", "--at-most", "-2"], "('w', 4, -2, 1.0, None, False, None)"),  # typer's own
    (["run", "w", "--count", " 5", "--ratio", "0.5"], "('w', 5, 9, 0.5, None, False, None)"),
    (["run", "w", "--where", "/tmp/x"], "('w', None, 9, 1.0, PosixPath('/tmp/x'), False, None)"),
])
def test_the_values_are_typer_s(argv: list[str], shown: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(argv, capsys) == (0, shown + "\n", "")


@pytest.mark.parametrize(("argv", "said"), [
    (["run", "w", "--count", "x"], "must be a whole number, not 'x'"),
    (["run", "w", "--count", "-1"], "must be at least 0, not '-1'"),
    (["run", "w", "--at-most", "10"], "must be at most 9, not '10'"),
    (["run", "w", "--where", ""], "is empty: give a path"),
])
def test_a_wrong_value_is_refused_in_typer_s_words(argv: list[str], said: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(argv, capsys)
    assert (code, out) == (2, "") and said in err and len(err.splitlines()) == 1, err


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, str, str]:
    """The exit code, stdout and stderr of ``argv`` run as every console script runs (``cli_support.run``)."""
    with pytest.raises(SystemExit) as ended:
        run(_app(), "t", argv)
    out, err = capsys.readouterr()
    return ended.value.code, out, err
