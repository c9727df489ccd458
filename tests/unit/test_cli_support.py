"""cli_support.run: how a console script ends, seen from the user's terminal (a real child process)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TINY_APP = '''
import sys, time
import typer
from dunscaith.entrypoints.cli_support import BadInput, new_app, run

app = new_app("a tiny app")

@app.callback()
def _root(ctx: typer.Context) -> None:
    if ctx.obj is None:
        ctx.obj = "made by the app"

@app.command("block")
def block() -> None:
    print("ready", flush=True)
    while True:  # short sleeps: a SIGINT that lands just before a sleep begins is seen at the next one
        time.sleep(0.1)

@app.command("give")
def give(code: int) -> int:
    return code

@app.command("show")
def show(ctx: typer.Context) -> None:
    print(f"obj={ctx.obj}")

@app.command("bad")
def bad() -> None:
    raise BadInput("that will not do")

if __name__ == "__main__":
    obj = sys.argv.pop(1) if len(sys.argv) > 1 and sys.argv[1].startswith("obj:") else None
    run(app, "tiny", obj=obj)
'''


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    script = tmp_path / "tiny.py"
    script.write_text(TINY_APP)
    return script


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=_env(),
                          timeout=60)


def test_ctrl_c_during_a_command_is_one_line_and_exit_130(tiny: Path) -> None:
    proc = subprocess.Popen([sys.executable, str(tiny), "block"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"  # the command is running, blocked
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err == "tiny: interrupted\n"
    assert "Traceback" not in err and out == ""


def test_a_command_that_returns_130_by_itself_prints_nothing_more(tiny: Path) -> None:
    done = _run(tiny, "give", "130")
    assert (done.returncode, done.stderr) == (130, "")


def test_bad_input_stays_one_line_and_exit_2(tiny: Path) -> None:
    done = _run(tiny, "bad")
    assert (done.returncode, done.stderr) == (2, "tiny: that will not do\n")


def test_obj_given_to_run_reaches_the_commands(tiny: Path) -> None:
    done = _run(tiny, "obj:a test container", "show")
    assert (done.returncode, done.stdout) == (0, "obj=obj:a test container\n")


def test_without_obj_the_app_makes_its_own(tiny: Path) -> None:
    done = _run(tiny, "show")
    assert (done.returncode, done.stdout) == (0, "obj=made by the app\n")


SLOW_IMPORT = '''
import time
print("importing", flush=True)
while True:
    time.sleep(60)
'''

QUICK_MAIN = '''
import sys

def main() -> None:
    print("main ran", flush=True)
    sys.exit(7)
'''


def _launch(tmp_path: Path, module: str, source: str) -> subprocess.Popen[str]:
    (tmp_path / f"{module}.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{tmp_path}"}
    code = f"from dunscaith.entrypoints.cli_support import launch; launch('tiny', {module!r})"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def test_ctrl_c_while_the_app_is_still_being_imported_is_one_line_and_exit_130(tmp_path: Path) -> None:
    proc = _launch(tmp_path, "slow_app", SLOW_IMPORT)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "importing\n"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, err) == (130, "tiny: interrupted\n")


def test_launch_runs_the_modules_main_and_keeps_its_exit_code(tmp_path: Path) -> None:
    proc = _launch(tmp_path, "quick_app", QUICK_MAIN)
    out, err = proc.communicate(timeout=60)
    assert (proc.returncode, out, err) == (7, "main ran\n", "")


def test_an_internal_error_from_a_system_call_is_said_in_plain_words() -> None:
    from dunscaith.entrypoints.cli_support import internal_words

    words = internal_words(PermissionError(13, "Permission denied", "/var/tmp/x"), "dunscaith")
    assert words.startswith("/var/tmp/x: Permission denied (PermissionError; DUNSCAITH_DEBUG=1 shows where")
    assert "[Errno" not in words
    assert internal_words(ValueError("oops"), "qdevices").startswith("ValueError: oops (QDEVICES_DEBUG=1")


def test_a_refusal_with_a_newline_is_printed_on_one_line_escaped(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(
        "from dunscaith.entrypoints.cli_support import BadInput, new_app, run\n"
        "app = new_app('x')\n"
        "@app.command('a')\n"
        "def a() -> None:\n"
        "    raise BadInput('no job named seed\\nx is recorded')\n"
        "@app.command('b')\n"
        "def b() -> None:\n"
        "    pass\n"
        "run(app, 'tiny')\n")
    done = subprocess.run([sys.executable, str(script), "a"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (done.returncode, done.stderr) == (2, "tiny: no job named seed\\nx is recorded\n")
