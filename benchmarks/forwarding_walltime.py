"""Benchmark: a forwarded ``dunscaith status JOB`` against a local one and a bare ``ssh HOST true``.

Starts two sshd login nodes (tests/infra/ssh_hosts.py; root, Linux) and, as the test user, times on the
hosts themselves (in the same run):

- ``ssh login1 true`` typed on login2 (the bare hop),
- ``dunscaith status JOB`` typed on login1 (local),
- ``dunscaith status JOB`` typed on login2 (forwarded to login1),

each without and with ControlMaster (a shared connection kept by ControlPersist), for each build:

- ``wheel``: this tree built as a wheel and installed (not editable) in a venv of its own, as users
  install it; the headline figures;
- ``editable``: the test hosts' editable install of this tree (its ``site`` pays an import finder per
  interpreter start, ~14 ms here, that a wheel has not); ``--no-editable`` leaves it out;
- ``before``: with ``--compare REV``, the wheel of that commit, submitted and timed beside this tree in
  the same rounds, so a change of load hits both alike; the paired differences are printed.

Each build submits its own job (its pointer names its own binary) and keeps its own settings cache per
case (a user's configuration does not change between two commands: one cache answers them all; the
cases differ only in ``DUNSCAITH_FORWARDING__SSH_CONFIG``, which is part of the cache's key; with
``--shared-cache`` they share one, as before, and every forwarded command misses it). Also the
bare interpreter start of each venv, with and without ``site``. Everything is interleaved round by round
(one timer kept running on each host), the builds' order reversed every other round. Prints medians
and the margin ``forwarded - (ssh + local)`` (goal: at most 0.1 s). Nothing is asserted.

    .venv/bin/python benchmarks/forwarding_walltime.py [--runs 11] [--compare REV] [--no-editable] [--shared-cache]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.infra.ssh_hosts import NOISE, ROOT, SYSTEM_PYTHON, VENVS, SshHosts

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
PACKAGES = ("domain", "ports", "adapters", "entrypoints", "migrations")


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


@dataclass(frozen=True)
class Build:
    label: str
    venv: Path

    @property
    def dunscaith(self) -> str:
        return str(self.venv / "bin" / "dunscaith")

    @property
    def job(self) -> str:
        return f"bench-{self.label}"


def _tree_digest(source: Path) -> str:
    """A digest of what a wheel of ``source`` is built from (its packages and pyproject.toml)."""
    digest = hashlib.sha256()
    files = [source / "pyproject.toml", *(p for pkg in PACKAGES for p in sorted((source / pkg).rglob("*"))
                                          if p.is_file() and "__pycache__" not in p.parts)]
    for path in files:
        digest.update(str(path.relative_to(source)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def wheel_venv(source: Path, label: str) -> Path:
    """A venv of the system python with ``source`` installed from a wheel (kept while the tree is the same)."""
    venv = VENVS / f"bench-{label}-{_tree_digest(source)}"
    if (venv / ".installed").exists():
        return venv
    for old in VENVS.glob(f"bench-{label}-*"):
        shutil.rmtree(old, ignore_errors=True)
    with tempfile.TemporaryDirectory() as out:
        # built from a copy: a build in place would leave build/ and *.egg-info in the tree
        tree = Path(out) / "tree"
        tree.mkdir()
        for name in ("pyproject.toml", "README.md"):
            shutil.copy(source / name, tree / name)
        for pkg in PACKAGES:
            shutil.copytree(source / pkg, tree / pkg, ignore=shutil.ignore_patterns("__pycache__"))
        if (source / "src").is_dir():  # one import name (issue 21): src/dunscaith links to the folders above
            shutil.copytree(source / "src", tree / "src", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", out, str(tree)],
                       check=True, timeout=900)
        wheel = next(Path(out).glob("dunscaith-*.whl"))
        subprocess.run([SYSTEM_PYTHON, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(wheel)],
                       check=True, timeout=900)
    (venv / ".installed").touch()
    return venv


def source_of(rev: str, into: Path) -> Path:
    """The tree of commit ``rev`` of this checkout, unpacked into ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--compare", metavar="REV", help="a commit to time beside this tree (both as wheels)")
    parser.add_argument("--no-editable", action="store_true", help="leave out the editable install")
    parser.add_argument("--shared-cache", action="store_true",
                        help="one settings cache for all cases (as before): each forwarded command then misses it")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        builds = [Build("wheel", wheel_venv(ROOT, "wheel"))]
        if args.compare:
            before = source_of(args.compare, Path(scratch))
            builds.append(Build("before", wheel_venv(before, "before")))
    hosts = SshHosts(2).start()
    if not args.no_editable:
        builds.append(Build("editable", hosts.venv))
    try:
        measure(hosts, builds, args.runs, args.compare, args.shared_cache)
    finally:
        hosts.stop()


def measure(hosts: SshHosts, builds: list[Build], runs: int, compare: str | None, shared_cache: bool) -> None:
    for build in builds:
        done = hosts.ssh("login1", f"{build.dunscaith} submit --name {build.job} -- true")
        if done.returncode != 0:
            raise SystemExit(done.stderr)
    config = hosts.user.home / ".ssh" / "config"
    mux = hosts.user.home / ".ssh" / "config-mux"
    mux.write_text(config.read_text() + "    ControlMaster auto\n    ControlPath ~/.ssh/cm-%C\n"
                   "    ControlPersist 120\n")
    shutil.chown(mux, hosts.user.name, hosts.user.name)
    mux.chmod(0o600)
    cache = hosts.user.home / ".cache"
    on1, on2 = Timer(hosts, "login1"), Timer(hosts, "login2")
    labels = ("plain", "ControlMaster")
    hops = {label: ["ssh", "-F", str(cfg), "-o", "BatchMode=yes", "login1", "true"]
            for label, cfg in zip(labels, (config, mux), strict=True)}

    def env(build: Build, label: str) -> dict[str, str]:
        cfg = config if label == "plain" else mux
        own = {} if shared_cache else {"XDG_CACHE_HOME": f"{cache}/bench-{build.label}-{label}"}
        return {"DUNSCAITH_FORWARDING__SSH_CONFIG": str(cfg), **own}

    def status(build: Build) -> list[str]:
        return [build.dunscaith, "status", build.job]

    def starts(build: Build) -> dict[str, list[str]]:
        python = str(build.venv / "bin" / "python")
        return {f"{build.label} python": [python, "-c", "pass"],
                f"{build.label} python -S": [python, "-S", "-c", "pass"]}

    times: dict[str, list[float]] = {}

    def keep(name: str, value: float) -> None:
        times.setdefault(name, []).append(value)

    for build in builds:  # warm: caches, the remembered settings, a master
        on1.time(status(build))
        for label in labels:
            on2.time(hops[label])
            on2.time(status(build), env(build, label))
    for round_ in range(runs):
        for label in labels:
            keep(f"{label} ssh", on2.time(hops[label]))
        for build in builds if round_ % 2 == 0 else builds[::-1]:  # no build always first (or last)
            keep(f"{build.label} local", on1.time(status(build)))
            for name, argv in starts(build).items():
                keep(name, on1.time(argv))
            for label in labels:
                keep(f"{build.label} {label} forwarded", on2.time(status(build), env(build, label)))
    on1.close()
    on2.close()
    report(times, builds, labels, compare)


def report(times: dict[str, list[float]], builds: list[Build], labels: tuple[str, ...], compare: str | None) -> None:
    median = {name: statistics.median(values) for name, values in times.items()}
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; medians of {len(times['plain ssh'])}")
    for label in labels:
        print(f"[{label}] ssh login1 true: {median[f'{label} ssh']:.3f} s")
    for build in builds:
        name = build.label if build.label != "before" else f"before ({compare})"
        print(f"--- {name}: {build.venv}")
        local = median[f"{build.label} local"]
        print(f"  local status on login1: {local:.3f} s; interpreter start (python -c pass) "
              f"{median[f'{build.label} python']:.3f} s, without site (-S) {median[f'{build.label} python -S']:.3f} s")
        for label in labels:
            hop, forwarded = median[f"{label} ssh"], median[f"{build.label} {label} forwarded"]
            print(f"  [{label}] forwarded status (login2): {forwarded:.3f} s; "
                  f"forwarded - (ssh + local): {forwarded - (hop + local):+.3f} s (goal <= +0.100 s)")
    if compare:
        print(f"--- this tree's wheel against {compare}'s, paired round by round (median of after - before, ratio)")
        for case in ("local", *(f"{label} forwarded" for label in labels)):
            after, before = times[f"wheel {case}"], times[f"before {case}"]
            diff = statistics.median(a - b for a, b in zip(after, before, strict=True))
            print(f"  {case}: {diff * 1000:+.1f} ms, ratio {statistics.median(after) / statistics.median(before):.3f}")


if __name__ == "__main__":
    main()
