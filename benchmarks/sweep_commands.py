"""Issue 23: a request command on a whole sweep with a live supervisor, against the same command on one
element (NAME-i).

Run (as root: the private Slurm of tests/infra/slurm.py and a throwaway PostgreSQL of tests/infra/postgres.py):
    .venv/bin/python benchmarks/sweep_commands.py [--size 300] [--stores sqlite,postgres] [--before TREE]
    .venv/bin/python benchmarks/sweep_commands.py --local      # the local scheduler instead (sleep, --max-running 50)

For each store (SQLite, PostgreSQL) and each tree (this one; ``--before TREE``: another source tree run
with ``PYTHONPATH=TREE/src`` in the same run, e.g. ``git archive 4288970 | tar -x -C /tmp/before``), a fresh
HOME and store: ``submit --name sw --array 0-(size-1) -- sleep 600`` supervised live in another process (on
Slurm one job array, most of its tasks pending on the one node), and once every element is released, the
real console script, one after the other:

    hold sw-299, release sw-299, hold sw, release sw, cancel sw-1, cancel sw

each timed (wall) with its CPU (user + system, the command's process alone), and its summary line. The
one-element commands are the baseline of the whole-sweep ones, in the same run and the same sweep. With
``--local`` the sweep is of ``sleep 600`` with ``--max-running 50``: 50 elements are held by the live
supervisor, the others answered by the command itself under their locks.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PY = sys.executable
DUNSCAITH = str(Path(PY).parent / "dunscaith")
FRONT_DOOR = "from dunscaith.entrypoints.dunscaith.front_door import main; main()"
NOT_RELEASED = frozenset({"recorded", "held", "submitting", "created", "unknown", "confirmed"})
# (action, element): "last" is NAME-<size-1> (on Slurm, a task still pending: one a hold applies to)
STEPS = (("hold", "last"), ("release", "last"), ("hold", ""), ("release", ""), ("cancel", "1"), ("cancel", ""))


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


class Run:
    def __init__(self, tree: Path | None, home: Path, extra: dict[str, str]) -> None:
        self.tree = tree
        self.home = home
        env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("PYTHONPATH", None)
        env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                    "XDG_CACHE_HOME": str(home / ".cache"), "DUNSCAITH_RECORDS__ROOT": str(home / "records"),
                    "NO_COLOR": "1", **extra})
        if tree is not None:
            env["PYTHONPATH"] = str(tree / "src")
        self.env = env

    def argv(self, *words: str) -> list[str]:
        return [DUNSCAITH, *words] if self.tree is None else [PY, "-c", FRONT_DOOR, *words]

    def run(self, *words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*words), env=self.env, capture_output=True, text=True, check=False,
                              timeout=600)

    def timed(self, *words: str, profile: Path | None = None) -> tuple[float, float, str, int]:
        start, cpu = time.perf_counter(), _children_cpu()
        if profile is None:
            done = self.run(*words)
        else:  # the command under cProfile (slower: its figures are where the time goes, not the time)
            script = self.home / "front_door.py"
            script.write_text(f"{FRONT_DOOR}\n")
            done = subprocess.run([PY, "-m", "cProfile", "-o", str(profile), str(script), *words], env=self.env,
                                  capture_output=True, text=True, check=False, timeout=600)
        wall, used = time.perf_counter() - start, _children_cpu() - cpu
        line = (done.stdout.strip().splitlines() or [""])[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
        return wall, used, line, done.returncode


def _configure(home: Path, cluster_env: dict[str, str] | None) -> None:
    config = home / ".config" / "dunscaith"
    config.mkdir(parents=True, exist_ok=True)
    text = "[commands]\nwait = 120\n"
    if cluster_env is not None:
        env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in cluster_env.items())
        text += f'[clusters.test]\nadapter = "slurm"\nenv = {{ {env} }}\n'
    (config / "config.toml").write_text(text)


def _states(run: Run, name: str) -> list[str]:
    done = run.run("status", name, "--json")
    if done.returncode not in (0, 1):
        return []
    return [str(e["state"]) for e in json.loads(done.stdout).get("elements", [])]


def _stop(proc: subprocess.Popen[str], timeout: float) -> None:
    try:
        proc.communicate(timeout=timeout)
        return
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()


def one_run(run: Run, size: int, cluster_env: dict[str, str] | None, label: str,
            profile: Path | None = None) -> list[tuple[str, float, float, str]]:
    _configure(run.home, cluster_env)
    name = "sw"
    words = ["submit", "--name", name, "--array", f"0-{size - 1}"]
    words += ["--cluster", "test"] if cluster_env is not None else ["--max-running", "50"]
    proc = subprocess.Popen(run.argv(*words, "--", "sleep", "600"), env=run.env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    figures = []
    try:
        started = time.monotonic()
        want = size if cluster_env is not None else 50
        while True:
            states = _states(run, name)
            released = sum(1 for s in states if s not in NOT_RELEASED)
            if len(states) == size and released >= want:
                break
            if time.monotonic() - started > 600 or proc.poll() is not None:
                raise SystemExit(f"{label}: the sweep was not released ({released}/{size}, rc {proc.poll()})")
            time.sleep(2)
        time.sleep(3)  # the supervisor settles into its polls
        for action, element in STEPS:
            target = name if not element else f"{name}-{size - 1 if element == 'last' else element}"
            where = None if profile is None or element else profile / f"{label.replace(', ', '-')}-{action}.prof"
            wall, cpu, line, rc = run.timed(action, target, profile=where)
            figures.append((f"{action} {'NAME-i' if element else 'NAME'}", wall, cpu, f"rc {rc}: {line}"))
            print(f"  {label:28} {action:8} {target:6} wall {wall:7.2f} s  cpu {cpu:6.2f} s  rc {rc}: {line}",
                  flush=True)
    finally:
        _stop(proc, 120)
        if cluster_env is not None:
            subprocess.run(["scancel", f"--name={name}"], env={**os.environ, **cluster_env}, check=False,
                           capture_output=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=300)
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--before", type=Path, default=None, metavar="TREE")
    parser.add_argument("--before-only", action="store_true", help="only --before's tree (a baseline run)")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="run each whole-sweep command under cProfile, its profile written into DIR")
    parser.add_argument("--local", action="store_true", help="the local scheduler (sleep, --max-running 50)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the cluster and the server stopped on the way out
    cluster_env: dict[str, str] | None = None
    if not args.local:
        from tests.infra.slurm import shared_cluster

        cluster_env = dict(shared_cluster().env)
    stores = args.stores.split(",")
    trees: list[Path | None] = [None]
    if args.before is not None:
        trees = [args.before.resolve()] if args.before_only else [args.before.resolve(), None]
    work = Path(tempfile.mkdtemp(prefix="dunscaith-sweep-cmd-bench-"))
    results: dict[tuple[str, str], list[tuple[str, float, float, str]]] = {}
    with contextlib.ExitStack() as stack:
        server = None
        if "postgres" in stores:
            from tests.infra.postgres import private_server

            server = stack.enter_context(private_server())
        stack.callback(shutil.rmtree, work, True)
        print(f"load average {os.getloadavg()[0]:.2f}; {args.size} elements, "
              f"{'local --max-running 50' if args.local else 'one Slurm array'}", flush=True)
        for store in stores:
            for tree in trees:
                which = "this tree" if tree is None else f"before ({tree.name})"
                home = Path(tempfile.mkdtemp(dir=work))
                extra = {}
                if store == "postgres":
                    assert server is not None
                    extra = {"DUNSCAITH_RECORDS__BACKEND": "postgresql",
                             "DUNSCAITH_RECORDS__URL": server.url(server.new_database("bench"))}
                label = f"{store}, {which}"
                results[(store, which)] = one_run(Run(tree, home, extra), args.size, cluster_env, label, args.profile)
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    print(f"{'store, tree':28} {'command':16} {'wall s':>8} {'cpu s':>7} {'wall / NAME-i':>14} {'cpu / NAME-i':>13}")
    for (store, which), figures in results.items():
        one = {f[0].split()[0]: f for f in figures if f[0].endswith("NAME-i")}
        for command, wall, cpu, _ in figures:
            base = one[command.split()[0]]
            print(f"{store + ', ' + which:28} {command:16} {wall:8.2f} {cpu:7.2f} {wall / base[1]:14.1f} "
                  f"{cpu / base[2]:13.1f}")


if __name__ == "__main__":
    main()
