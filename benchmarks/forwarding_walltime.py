"""Benchmark: a forwarded ``dunscaith status JOB`` against a local one and a bare ``ssh HOST true``.

Starts two sshd login nodes (tests/infra/ssh_hosts.py; root, Linux), submits a short job on login1 and,
as the test user, times on the hosts themselves (in the same run):

- ``ssh login1 true`` typed on login2 (the bare hop),
- ``dunscaith status JOB`` typed on login1 (local),
- ``dunscaith status JOB`` typed on login2 (forwarded to login1),

each without and with ControlMaster (a shared connection kept by ControlPersist), and the venv's bare
interpreter start with and without ``site`` (a forwarded command starts two more than a local one),
interleaved round by round (one timer kept running on each host), so a change of the machine's load
shifts all alike. Prints
the medians and the margin ``forwarded - (ssh + local)`` (goal: at most 0.1 s). Nothing is asserted.

    .venv/bin/python benchmarks/forwarding_walltime.py
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.infra.ssh_hosts import NOISE, SshHosts

RUNS = 11
# One timer per host, kept running: it reads one JSON [argv, env] per line, runs it once and prints its
# wall time, so the rounds below interleave the measurements and a change of load hits all of them alike.
TIMER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    argv, env = json.loads(line)
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                          env={**os.environ, **env})
    elapsed = time.perf_counter() - start
    print(json.dumps(elapsed if done.returncode == 0 else f"{argv}: exit {done.returncode}"), flush=True)
"""


class Timer:
    def __init__(self, hosts: SshHosts, host: str) -> None:
        script = hosts.user.home / ".bench-timer.py"
        script.write_text(TIMER)
        self.process = hosts.popen(host, f"/usr/bin/python3 {script}", stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE)

    def time(self, argv: list[str], env: dict[str, str] | None = None) -> float:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps([argv, env or {}]) + "\n").encode())
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline().decode()
            if not line:
                raise SystemExit(f"the timer ended: {argv}")
            if line.strip() and line.strip() != NOISE:
                value = json.loads(line)
                if not isinstance(value, float):
                    raise SystemExit(value)
                return value

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def main() -> None:
    hosts = SshHosts(2).start()
    try:
        ds = hosts.dunscaith
        done = hosts.ssh("login1", f"{ds} submit --name bench -- true")
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        config = hosts.user.home / ".ssh" / "config"
        mux = hosts.user.home / ".ssh" / "config-mux"
        mux.write_text(config.read_text() + "    ControlMaster auto\n    ControlPath ~/.ssh/cm-%C\n"
                       "    ControlPersist 120\n")
        shutil.chown(mux, hosts.user.name, hosts.user.name)
        mux.chmod(0o600)
        on1, on2 = Timer(hosts, "login1"), Timer(hosts, "login2")
        local_status = [ds, "status", "bench"]
        python = str(hosts.venv / "bin" / "python")
        starts = {"python": [python, "-c", "pass"], "python -S": [python, "-S", "-c", "pass"]}
        cases = {label: (["ssh", "-F", str(cfg), "-o", "BatchMode=yes", "login1", "true"],
                         {"DUNSCAITH_FORWARDING__SSH_CONFIG": str(cfg)})
                 for label, cfg in (("plain", config), ("ControlMaster", mux))}
        times: dict[str, list[float]] = {"local": [], **{name: [] for name in starts}}
        for label in cases:
            times[f"{label} ssh"], times[f"{label} forwarded"] = [], []
        on1.time(local_status)  # warm: caches, the remembered settings, a master
        for bare, env in cases.values():
            on2.time(bare)
            on2.time(local_status, env)
        for _ in range(RUNS):
            times["local"].append(on1.time(local_status))
            for name, argv in starts.items():
                times[name].append(on1.time(argv))
            for label, (bare, env) in cases.items():
                times[f"{label} ssh"].append(on2.time(bare))
                times[f"{label} forwarded"].append(on2.time(local_status, env))
        on1.close()
        on2.close()
        median = {name: statistics.median(values) for name, values in times.items()}
        print(f"local status on login1:            {median['local']:.3f} s")
        # A forwarded command starts two interpreters more than a local one (the caller, the forwarded side);
        # site's share of each is mostly the test venv's editable-install finder, which a wheel has not.
        print(f"interpreter start (venv python -c pass): {median['python']:.3f} s, "
              f"without site (-S): {median['python -S']:.3f} s")
        for label in cases:
            hop, forwarded = median[f"{label} ssh"], median[f"{label} forwarded"]
            margin = forwarded - (hop + median["local"])
            print(f"[{label}] ssh login1 true:          {hop:.3f} s")
            print(f"[{label}] forwarded status (login2): {forwarded:.3f} s")
            print(f"[{label}] forwarded - (ssh + local): {margin:+.3f} s (goal <= +0.100 s)")
    finally:
        hosts.stop()


if __name__ == "__main__":
    main()
