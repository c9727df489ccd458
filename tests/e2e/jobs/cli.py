"""Run the real ``dunscaith`` console script as a subprocess on a private home and record root."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")


@dataclass
class Cli:
    tmp: Path

    @property
    def root(self) -> Path:
        return self.tmp / "records"

    def env(self, **extra: str) -> dict[str, str]:
        # COLUMNS and LINES are the terminal's, not the test's: a test that wants a width says so.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("DUNSCAITH_") and k not in ("COLUMNS", "LINES")}
        env.update({
            "HOME": str(self.tmp / "home"),
            "XDG_CONFIG_HOME": str(self.tmp / "home" / ".config"),
            "XDG_CACHE_HOME": str(self.tmp / "home" / ".cache"),
            "DUNSCAITH_RECORDS__ROOT": str(self.root),
            "DUNSCAITH_SUPERVISE__POLL": "0.2",
            "DUNSCAITH_SUPERVISE__WAIT": "3",
            "DUNSCAITH_SUPERVISE__ABSENCE": "2",
            "DUNSCAITH_SUPERVISE__GIVEUP": "60",
            "DUNSCAITH_SUPERVISE__DRAIN": "10",
            # Another host's jobs are forwarded over ssh: "login2" is a closed port on loopback here, so
            # a forward is refused before authentication (never ran), and no name is ever looked up.
            "DUNSCAITH_FORWARDING__SSH_CONFIG": str(self.ssh_config()),
        })
        env.update(extra)
        return env

    def run(self, *args: str, timeout: float = 90, env: Mapping[str, str] | None = None,
            **more: str) -> subprocess.CompletedProcess[str]:
        """Run dunscaith with ``args``, in this home, with the settings (environment) ``env`` and ``more`` add."""
        return subprocess.run([DUNSCAITH, *args], env=self.env(**{**(env or {}), **more}), capture_output=True,
                              text=True, timeout=timeout, cwd=self.tmp)

    def ssh_config(self) -> Path:
        path = self.tmp / "ssh_config"
        if not path.exists():
            path.write_text("Host *\n    HostName 127.0.0.1\n    Port 9\n    BatchMode yes\n")
        return path

    def pointer_of_another_host(self, job: str, state: str) -> None:
        """A pointer, as login node ``login2`` would write it, for a job whose record lives there."""
        pointers = self.tmp / "home" / ".config" / "dunscaith" / "jobs"
        pointers.mkdir(parents=True, exist_ok=True)
        (pointers / job).write_text(json.dumps({
            "version": 1, "job": job, "host": "login2", "record_root": "/var/tmp/x", "root_machine_id": "m2",
            "root_hostname": "login2", "binary": "/opt/bin/dunscaith", "cluster": "local", "adapter": "local",
            "state": state, "state_at": "2026-01-01T00:00:00+00:00", "supervised_at": None}))

    def start(self, *args: str, ignore_hup: bool = False, env: Mapping[str, str] | None = None,
              **more: str) -> subprocess.Popen[str]:
        def preexec() -> None:
            if ignore_hup:
                signal.signal(signal.SIGHUP, signal.SIG_IGN)

        return subprocess.Popen([DUNSCAITH, *args], env=self.env(**{**(env or {}), **more}), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=self.tmp, preexec_fn=preexec,
                                start_new_session=True)

    def status(self, job: str) -> dict[str, Any]:
        done = self.run("status", job, "--json")
        assert done.returncode in (0, 1), done.stderr  # 1: an outcome that is not success
        return json.loads(done.stdout)  # type: ignore[no-any-return]


def await_condition(check: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def await_state(cli: Cli, job: str, state: str, timeout: float = 30.0) -> None:
    last: list[str] = [""]

    def reached() -> bool:
        done = cli.run("status", job, "--json")
        last[0] = f"exit {done.returncode}: {done.stdout.strip()[-2000:]} {done.stderr.strip()[-500:]}"
        return done.returncode in (0, 1) and json.loads(done.stdout)["state"] == state

    try:
        await_condition(reached, timeout, f"job {job} to be {state}")
    except AssertionError as exc:  # say what the job was instead, so a failure under load can be read
        raise AssertionError(f"{exc}; last status: {last[0]}") from None


def await_long_sleep(cli: Cli, job: str, seconds: float, timeout: float = 120.0) -> None:
    """Until the job's supervisor has announced (in its lock) a next loop at least ``seconds`` after its
    last: it is asleep to its next poll, and only an append can wake it sooner."""
    from datetime import datetime

    def asleep() -> bool:
        try:
            loop = cli.status(job)["supervisor"]
        except AssertionError:  # not recorded yet
            return False
        if not loop["last_loop"] or not loop["next_loop"]:
            return False
        gap = datetime.fromisoformat(loop["next_loop"]) - datetime.fromisoformat(loop["last_loop"])
        return gap.total_seconds() >= seconds

    await_condition(asleep, timeout, f"{job}'s supervisor asleep for {seconds:g} s")
