"""Run one Grid Engine client command: an argv list, no shell, a timeout that kills the whole group."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class CommandResult:
    argv: tuple[str, ...]
    returncode: int | None  # None when it never ran or was killed by our timeout
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    spawn_error: str = ""  # the program could not be started at all (nothing was sent)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.spawn_error

    @property
    def ran(self) -> bool:
        """The client ran to its own end (not timed out, not killed, not unstartable)."""
        return not self.timed_out and not self.spawn_error and self.returncode is not None and self.returncode >= 0

    def failure(self) -> str:
        """One line saying why the command did not succeed."""
        name = Path(self.argv[0]).name if self.argv else "command"
        if self.spawn_error:
            return f"{name} could not be started: {self.spawn_error}"
        if self.timed_out:
            return f"{name} gave no answer in time and was stopped"
        if self.returncode is not None and self.returncode < 0:
            return f"{name} was killed by signal {-self.returncode}"
        lines = [ln.strip() for ln in (self.stderr + "\n" + self.stdout).splitlines() if ln.strip()]
        return f"{name} exited with {self.returncode}: {lines[0] if lines else '(no message)'}"


class CommandRunner:
    """Finds Grid Engine's programs (in ``bin_dir`` or on PATH) and runs them with the cluster's environment."""

    def __init__(self, bin_dir: Path | None, env: Mapping[str, str]) -> None:
        self._bin_dir = bin_dir
        self._given = dict(env)
        self._env = {**os.environ, **env}

    def with_env(self, extra: Mapping[str, str]) -> CommandRunner:
        """The same runner with ``extra`` under the cluster's own environment (which wins)."""
        return CommandRunner(self._bin_dir, {**extra, **self._given})

    def program(self, name: str) -> str | None:
        if self._bin_dir is not None:
            path = self._bin_dir / name
            return str(path) if os.access(path, os.X_OK) else None
        return shutil.which(name, path=self._env.get("PATH", os.defpath))

    def run(
        self, name: str, args: Sequence[str], *, timeout: float, stdin: str | None = None, cwd: Path | None = None
    ) -> CommandResult:
        program = self.program(name)
        argv = (program or name, *args)
        if program is None:
            where = f"in {self._bin_dir}" if self._bin_dir is not None else "on PATH"
            return CommandResult(argv, None, spawn_error=f"no executable {name} {where}")
        try:
            # a session of its own, so a timeout kills the client and anything it started
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                start_new_session=True,
                cwd=cwd,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            return CommandResult(argv, None, spawn_error=exc.strerror or str(exc))
        try:
            out, err = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            try:
                out, err = proc.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                out, err = "", ""
            proc.wait()
            return CommandResult(argv, None, out, err, timed_out=True)
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        return CommandResult(argv, proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
