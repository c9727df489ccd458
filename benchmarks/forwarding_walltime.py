"""Benchmark: a forwarded ``dunscaith status JOB`` against a local one and a bare ``ssh HOST true``.

Starts two sshd login nodes (tests/infra/ssh_hosts.py; root, Linux), submits a short job on login1 and,
as the test user, times on the hosts themselves (in the same run):

- ``ssh login1 true`` typed on login2 (the bare hop),
- ``dunscaith status JOB`` typed on login1 (local),
- ``dunscaith status JOB`` typed on login2 (forwarded to login1),

each without and with ControlMaster (a shared connection kept by ControlPersist). Prints the medians and
the margin ``forwarded - (ssh + local)`` (goal: at most 0.1 s). Nothing is asserted.

    .venv/bin/python benchmarks/forwarding_walltime.py
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.infra.ssh_hosts import NOISE, SshHosts

RUNS = 11
TIMER = """
import json, statistics, subprocess, sys, time
argv, runs = json.loads(sys.argv[1]), int(sys.argv[2])
subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm: caches, a master
times = []
for _ in range(runs):
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append(time.perf_counter() - start)
    if done.returncode != 0:
        sys.exit(f"{argv}: exit {done.returncode}")
print(json.dumps(statistics.median(times)))
"""


def timed(hosts: SshHosts, host: str, argv: list[str], env: str = "") -> float:
    command = f"{env} /usr/bin/python3 - {shlex.quote(json.dumps(argv))} {RUNS}"
    done = hosts.ssh(host, command, timeout=600, input=TIMER)
    lines = [line for line in done.stdout.splitlines() if line.strip() and line.strip() != NOISE]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{host} {argv}: {done.stderr.strip()}")
    return float(lines[-1])


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
        local = timed(hosts, "login1", [ds, "status", "bench"])
        print(f"local status on login1:            {local:.3f} s")
        for label, ssh_config in (("plain", str(config)), ("ControlMaster", str(mux))):
            bare = timed(hosts, "login2", ["ssh", "-F", ssh_config, "-o", "BatchMode=yes", "login1", "true"])
            forwarded = timed(hosts, "login2", [ds, "status", "bench"],
                              env=f"DUNSCAITH_FORWARDING__SSH_CONFIG={ssh_config}")
            margin = forwarded - (bare + local)
            print(f"[{label}] ssh login1 true:          {bare:.3f} s")
            print(f"[{label}] forwarded status (login2): {forwarded:.3f} s")
            print(f"[{label}] forwarded - (ssh + local): {margin:+.3f} s (goal <= +0.100 s)")
    finally:
        hosts.stop()


if __name__ == "__main__":
    main()
