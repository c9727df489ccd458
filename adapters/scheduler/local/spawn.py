"""Start an object's process owner detached, and ask it to terminate: the two uses of ``dunscaith remote``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from dunscaith.adapters.scheduler.local.layout import ENV, INSTANCE_DIR, SCRIPT, STDERR, STDOUT, StoredSpec

SHIM = Path(__file__).with_name("exec_shim.py")


def default_dunscaith() -> tuple[str, ...]:
    """This interpreter's own ``dunscaith``: never whichever one PATH happens to name."""
    script = Path(sys.executable).parent / "dunscaith"
    if script.is_file() and os.access(script, os.X_OK):
        return (str(script),)
    # the console script's own start, so `remote run` takes its lean path here too
    return (sys.executable, "-c", "from dunscaith.entrypoints.dunscaith.front_door import main; main()")


def program_of(spec: StoredSpec, directory: Path) -> list[str]:
    if not spec.script:
        return list(spec.command)
    script = directory / SCRIPT
    with open(script, "rb") as handle:
        shebang = handle.read(2) == b"#!"
    return [str(script)] if shebang else ["/bin/sh", str(script)]


def spawn_owner(dunscaith: Sequence[str], spec: StoredSpec, directory: Path, keep_fd: int) -> subprocess.Popen[bytes]:
    """``dunscaith remote run`` for this object, in a session of its own, stdin /dev/null.

    ``keep_fd`` (the launch lock) is inherited, so the lock stays held for as long as the process
    owner lives: "someone is responsible for starting this object" never has a gap.
    """
    argv = [
        *dunscaith,
        "remote",
        "run",
        "--instance-dir",
        str(directory / INSTANCE_DIR),
        "--cwd",
        spec.workdir,
        "--",
        sys.executable,
        "-I",
        "-S",
        str(SHIM),
        str(directory / ENV),
        "--",
        *program_of(spec, directory),
    ]
    out = os.open(directory / STDOUT, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    err = os.open(directory / STDERR, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=directory,
            start_new_session=True,
            pass_fds=(keep_fd,),
        )
    finally:
        os.close(out)
        os.close(err)


class TerminateAnswer(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    code: int
    word: str  # confirmed, refused, unanswered, unrequested; or the error line


def terminate(
    dunscaith: Sequence[str], instance_dir: Path, *, nonce: str | None, grace: float, wait: float
) -> TerminateAnswer:
    argv = [*dunscaith, "remote", "terminate", str(instance_dir), "--grace", f"{grace:g}", "--wait", f"{wait:g}"]
    if nonce is not None:
        argv += ["--nonce", nonce]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=wait + 60, check=False)
    text = (done.stdout or done.stderr).decode(errors="replace").strip()
    return TerminateAnswer(done.returncode, text.splitlines()[-1] if text else "")
