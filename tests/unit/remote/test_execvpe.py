"""exec_side.execvpe and exec_shim's copy run (or fail) exactly as os.execvpe does, without importing warnings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SHIM = Path(__file__).resolve().parents[3] / "adapters" / "scheduler" / "local" / "exec_shim.py"
RUN = """
import json, os, sys
how, program, path = sys.argv[1], sys.argv[2], sys.argv[3]
env = {} if path == "-" else {"PATH": path}
if how == "os":
    run = os.execvpe
elif how == "side":
    from dunscaith.adapters.process.exec_side import execvpe as run
else:
    import importlib.util
    spec = importlib.util.spec_from_file_location("shim", how)
    shim = importlib.util.module_from_spec(spec); spec.loader.exec_module(shim)
    run = shim._execvpe
try:
    run(program, [program, "-c", "echo ran $0"], env)
except (OSError, ValueError) as exc:
    print(json.dumps([type(exc).__name__, getattr(exc, "errno", None), getattr(exc, "strerror", str(exc))]))
"""


@pytest.mark.parametrize(("program", "path"), [
    ("sh", "/usr/bin:/bin"), ("sh", "/nonexistent:/bin"), ("sh", "-"), ("sh", ""), ("nonexistent-program", "/bin"),
    ("/bin/sh", "/nonexistent"), ("./nonexistent", "/bin"), ("sh", "/etc/passwd:/bin"), ("passwd", "/etc:/bin"),
    ("passwd", "/etc"), ("", "/bin"),
])
def test_the_same_run_or_error_as_os_execvpe(program: str, path: str, tmp_path: Path) -> None:
    def outcome(how: str) -> tuple[int, str]:
        done = subprocess.run([sys.executable, "-c", RUN, how, program, path],
                              capture_output=True, text=True, cwd=tmp_path, check=False)
        return done.returncode, done.stdout
    expected = outcome("os")
    assert outcome("side") == expected
    assert outcome(str(SHIM)) == expected


def test_no_warnings_import() -> None:
    code = ("import sys; from dunscaith.adapters.process.exec_side import execvpe\n"
            "import os\nif os.fork() == 0:\n    execvpe('true', ['true'], {'PATH': '/nonexistent:/usr/bin:/bin'})\n"
            "os.wait(); print('warnings' in sys.modules)")
    # the child's search must not import it either: measured in a child that fails instead
    failing = ("import sys; from dunscaith.adapters.process.exec_side import execvpe\n"
               "try:\n    execvpe('nonexistent-program', ['x'], {'PATH': '/nonexistent:/bin'})\n"
               "except OSError:\n    pass\nprint('warnings' in sys.modules)")
    for source in (code, failing):
        done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONWARNINGS": ""})
        assert done.stdout.strip().endswith("False")
