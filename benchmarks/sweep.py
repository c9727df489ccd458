"""Sweeps (issue 23): figures of a sweep's supervision, each beside its baseline from the same run.

Run (as root, with the Slurm packages of .ci/install-packages):
    .venv/bin/python benchmarks/sweep.py [--quick]

It starts the project's private single-node Slurm (tests/infra/slurm.py) and runs the real console
script in a private HOME, with a counting shim as the cluster's ``bin_dir`` (one line per Slurm call):

1. a 500-element sweep on Slurm, from ``submit`` until every element's record says released, against
   ``sbatch --array=1-500 --hold --wrap true`` + ``scontrol release`` (goal <= 2x); the sbatch and
   scontrol calls that took (goal: a constant, not one per element);
2. while those 500 are queued or running: squeue/sacct calls per poll interval (goal: 1), and the
   supervisor's CPU (its whole process tree) over a measured stretch, scaled to an hour (goal <= 1 s):
   once from 20 s after the release (polls every supervise.poll: the dearest minutes), once from 5
   minutes after it (polls backed off with the elements' age, as for most of a sweep's hours);
3. a 1,000-element sweep: the supervisor's peak RSS (goal <= 150 MiB), and ``status NAME`` of it against
   ``status JOB`` of one element (medians of 5; goal <= 1.5x);
4. 2,000 elements on the local scheduler with --max-running 50: every element runs once, end to end.

``--quick`` makes the sizes 100 / 200 / 200 and the CPU stretch 30 s (a smoke run, not the figures).
``--hour`` measures stage 2 over the whole hour after the release instead (CPU and squeues every 5 minutes,
then the hour's total; the run takes 75 minutes): the figure the goal is per, with the polls' back-off in it.
``--release N`` measures only stage 1 (issue 37's goal: <= 1.0 s, and (t500 - t1)/499 <= 1 ms an element):
N rounds, each a 1-element and a 500-element sweep, each in a new home; with ``--before TREE`` (a source
tree of an earlier commit, as ``PYTHONPATH``) each round runs both trees' too, interleaved; medians printed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dunscaith.adapters.store.sqlite.store import DB_FILE
from tests.infra.slurm import SlurmUnavailable, shared_cluster
from tests.infra.slurm_bin import REAL, calls, make_bin_dir

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")
NOT_RELEASED = frozenset({"recorded", "held", "submitting", "created", "unknown", "confirmed"})
TICK = 10.0  # supervise.poll: the interval the squeue/sacct figure is per


def _env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode written, as an installed dunscaith runs
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
                "DUNSCAITH_RECORDS__ROOT": str(home / "records"), "NO_COLOR": "1"})
    env.update(extra or {})
    return env


def _configure(home: Path, slurm_env: dict[str, str], bin_dir: Path) -> None:
    config = home / ".config" / "dunscaith"
    config.mkdir(parents=True, exist_ok=True)
    env = ", ".join(f"{k} = {json.dumps(v)}" for k, v in slurm_env.items())
    (config / "config.toml").write_text(
        f'[clusters.test]\nadapter = "slurm"\nbin_dir = "{bin_dir}"\nenv = {{ {env} }}\n')


def _summaries(home: Path, sweep: str) -> list[tuple[str, str]]:
    """Each element's summary state, read from the store's file (read-only) as the benchmark's watch."""
    db = home / "records" / DB_FILE
    if not db.exists():
        return []
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)) as conn:
        try:
            rows = conn.execute("SELECT jobs.name, summaries.state FROM summaries JOIN jobs "
                                "ON jobs.id = summaries.job_id WHERE summaries.sweep = ?", (sweep,)).fetchall()
        except sqlite3.OperationalError:  # the store is being made: no table yet
            return []
    return [(str(name), str(state)) for name, state in rows]


def _released(home: Path, sweep: str, count: int) -> bool:
    found = _summaries(home, sweep)
    return len(found) == count and all(state not in NOT_RELEASED for _, state in found)


def _cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its children (reaped or alive), from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15]) / ticks  # utime stime cutime cstime
    return total


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _wait(check: object, timeout: float, what: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():  # type: ignore[operator]
            return time.monotonic() - started
        time.sleep(0.05)
    raise SystemExit(f"timed out after {timeout:.0f} s waiting for {what}")


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)  # the supervisor drains; its elements stay queued
        try:
            proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()


def _scancel(slurm_env: dict[str, str], name: str) -> None:
    subprocess.run([REAL["scancel"], f"--name={name}"], env={**os.environ, **slurm_env}, check=False,
                   capture_output=True)


def _median_wall(argv: list[str], env: dict[str, str], runs: int = 5) -> float:
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        walls.append(time.perf_counter() - started)
        assert done.returncode in (0, 1, 5), done.stderr
    return statistics.median(walls)


def _made(count: Path) -> Counter[str]:
    """The Slurm calls the counting shim has logged so far, by command."""
    return Counter(line.split(" ", 1)[0] for line in calls(count))


def _first_hour(pid: int, count: Path, released: float) -> None:
    """The supervisor's CPU (whole process tree) over the hour after the release, every 5 minutes: the
    young elements' polls every supervise.poll, then backed off with their age to the cap."""
    cpu0 = _cpu(pid)
    squeue0 = _made(count)["squeue"]
    last_cpu, last_squeue = cpu0, squeue0
    for minute in range(5, 65, 5):
        time.sleep(max(0.0, released + minute * 60 - time.monotonic()))
        cpu, squeue = _cpu(pid), _made(count)["squeue"]
        print(f"   minutes {minute - 5}-{minute}: CPU {cpu - last_cpu:.2f} s, squeue {squeue - last_squeue}",
              flush=True)
        last_cpu, last_squeue = cpu, squeue
    print(f"2. with the elements queued/running, the first hour after the release: supervisor CPU "
          f"{last_cpu - cpu0:.2f} s (whole process tree; goal <= 1 s), squeue {last_squeue - squeue0}", flush=True)


def slurm_figures(slurm_env: dict[str, str], work: Path, size: int, big: int, stretch: float,
                  settled: bool = True, hour: bool = False) -> None:
    home = work / "home"
    count = work / "calls"
    _configure(home, slurm_env, make_bin_dir(work / "bin", count_to=count))
    env = _env(home, {"DUNSCAITH_SUPERVISE__POLL": str(TICK)})

    # 1. from submit until every element is released, against one sbatch --array + scontrol release
    started = time.monotonic()
    proc = subprocess.Popen([DUNSCAITH, "submit", "--name", "bench", "--array", f"1-{size}", "--cluster", "test",
                             "--", "sleep", "3600"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    _wait(lambda: _released(home, "bench", size), 600, f"{size} elements released")
    ours = time.monotonic() - started
    made = _made(count)
    base_started = time.monotonic()
    sbatch = subprocess.run([REAL["sbatch"], "--parsable", f"--array=1-{size}", "--hold", "--job-name=base",
                             "--output=/dev/null", "--wrap", "sleep 3600"], env={**os.environ, **slurm_env},
                            capture_output=True, text=True, check=True)
    subprocess.run([REAL["scontrol"], "release", sbatch.stdout.strip().split(";")[0]],
                   env={**os.environ, **slurm_env}, check=True, capture_output=True)
    base = time.monotonic() - base_started
    _scancel(slurm_env, "base")
    print(f"1. {size}-element sweep on Slurm, submit -> every element released: {ours:.2f} s; "
          f"sbatch --array --hold + scontrol release: {base:.2f} s; ratio {ours / base:.1f}x (goal <= 2x)")
    print(f"   Slurm calls to get there: sbatch {made['sbatch']}, scontrol {made['scontrol']}, "
          f"squeue {made['squeue']}, sacct {made['sacct']} (goal: sbatch and scontrol a constant)")

    # 2. while they are queued or running: queries per poll interval, and the supervisor's CPU; once in the
    # first minutes (polls every supervise.poll), once later (polls backed off with the elements' age)
    released = time.monotonic()
    if hour:
        _first_hour(proc.pid, count, released)
    early = released + 2 * TICK  # past the first polls after the release
    stretches = [] if hour else [("minutes 0-2.5", early)] + ([("minutes 5-7", released + 300.0)] if settled else [])
    for when, moment in stretches:
        time.sleep(max(0.0, moment - time.monotonic()))
        before_calls = _made(count)
        cpu0, t0 = _cpu(proc.pid), time.monotonic()
        time.sleep(stretch)
        cpu1, t1 = _cpu(proc.pid), time.monotonic()
        after_calls = _made(count)
        intervals = (t1 - t0) / TICK
        queries = (after_calls["squeue"] - before_calls["squeue"]) / intervals
        accounting = (after_calls["sacct"] - before_calls["sacct"]) / intervals
        per_hour = (cpu1 - cpu0) * 3600 / (t1 - t0)
        print(f"2. with {size} elements queued/running, {when} after the release, over {t1 - t0:.0f} s: squeue "
              f"{queries:.2f} and sacct {accounting:.2f} per {TICK:g} s poll interval (goal 1); supervisor CPU "
              f"{cpu1 - cpu0:.2f} s, {per_hour:.1f} s per hour at that rate (goal <= 1 s)", flush=True)
    _stop(proc)
    _scancel(slurm_env, "bench")

    # 3. peak RSS with `big` elements, then status NAME against status JOB
    proc = subprocess.Popen([DUNSCAITH, "submit", "--name", "big", "--array", f"1-{big}", "--cluster", "test",
                             "--", "sleep", "3600"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    _wait(lambda: _released(home, "big", big), 900, f"{big} elements released")
    time.sleep(TICK)
    rss = _peak_rss_mib(proc.pid)
    print(f"3. peak RSS of the supervisor of {big} elements: {rss:.1f} MiB (goal <= 150 MiB)")
    _stop(proc)
    _scancel(slurm_env, "big")
    sweep = _median_wall([DUNSCAITH, "status", "big"], env)
    one = _median_wall([DUNSCAITH, "status", "big-1"], env)
    print(f"   status big ({big} elements): {sweep * 1000:.0f} ms; status big-1: {one * 1000:.0f} ms; "
          f"ratio {sweep / one:.2f}x (goal <= 1.5x)")


def _until_released(env: dict[str, str], home: Path, name: str, size: int, slurm_env: dict[str, str]) -> float:
    """Seconds from ``submit`` until every element's record says released (the supervisor then stopped)."""
    started = time.monotonic()
    proc = subprocess.Popen([DUNSCAITH, "submit", "--name", name, "--array", f"1-{size}", "--cluster", "test",
                             "--", "sleep", "3600"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _wait(lambda: _released(home, name, size), 600, f"{size} elements released")
        return time.monotonic() - started
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # its record is thrown away: no drain needed
        proc.communicate()
        _scancel(slurm_env, name)


def release_figures(slurm_env: dict[str, str], work: Path, size: int, rounds: int, before: Path | None) -> None:
    """Stage 1 alone, a 1-element and a ``size``-element sweep a round, both trees interleaved."""
    trees: dict[str, dict[str, str]] = {"now": {}}
    if before is not None:
        trees["before"] = {"PYTHONPATH": str(before)}
    times: dict[tuple[str, int], list[float]] = {}
    for n in range(rounds):
        for tree, extra in trees.items():
            for elements in (1, size):
                home = work / f"release-{tree}-{elements}-{n}"
                count = work / f"calls-{tree}-{elements}-{n}"
                _configure(home, slurm_env, make_bin_dir(work / f"bin-{tree}-{elements}-{n}", count_to=count))
                env = _env(home, {"DUNSCAITH_SUPERVISE__POLL": str(TICK), **extra})
                took = _until_released(env, home, f"r{n}x{elements}", elements, slurm_env)
                times.setdefault((tree, elements), []).append(took)
                made = _made(count)
                print(f"   round {n + 1}, {tree}, {elements} element(s): {took:.2f} s (sbatch {made['sbatch']}, "
                      f"scontrol {made['scontrol']})", flush=True)
    for tree in trees:
        one, many = statistics.median(times[(tree, 1)]), statistics.median(times[(tree, size)])
        print(f"1. {tree}: submit -> every element released, medians of {rounds}: 1 element {one:.2f} s, {size} "
              f"elements {many:.2f} s (goal <= 1.0 s); (t{size} - t1)/{size - 1} = "
              f"{(many - one) / (size - 1) * 1000:.2f} ms an element (goal <= 1 ms)")
    if before is not None:
        print(f"   ratio now / before, {size} elements: "
              f"{statistics.median(times[('now', size)]) / statistics.median(times[('before', size)]):.2f}")


def local_figures(work: Path, size: int) -> None:
    home = work / "local-home"
    home.mkdir(parents=True)
    ran = work / "ran"
    env = _env(home)
    started = time.monotonic()
    done = subprocess.run([DUNSCAITH, "submit", "--name", "loc", "--array", f"1-{size}", "--max-running", "50", "--",
                           "sh", "-c", f"echo {{}} >> {ran}"], env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    counts = Counter(ran.read_text().split()) if ran.exists() else Counter()
    once = counts == Counter(str(i) for i in range(1, size + 1))
    print(f"4. {size} elements on the local scheduler, --max-running 50: exit {done.returncode}, "
          f"{wall:.1f} s end to end; every element ran once: {once} ({sum(counts.values())} runs)")
    if not once or done.returncode != 0:
        print(done.stderr[-2000:])


def main() -> None:
    quick = "--quick" in sys.argv
    size, big, local, stretch = (100, 200, 200, 30.0) if quick else (500, 1000, 2000, 120.0)
    try:
        cluster = shared_cluster() if "--local" not in sys.argv else None
    except SlurmUnavailable as exc:
        print(f"skipped (no Slurm): {exc}")
        cluster = None
    work = Path(tempfile.mkdtemp(prefix="dunscaith-sweep-bench-"))
    try:
        if "--release" in sys.argv:
            rounds = int(sys.argv[sys.argv.index("--release") + 1])
            before = Path(sys.argv[sys.argv.index("--before") + 1]) if "--before" in sys.argv else None
            if cluster is not None:
                release_figures(dict(cluster.env), work, size, rounds, before)
            return
        if cluster is not None:
            slurm_figures(dict(cluster.env), work, size, big, stretch, settled=not quick, hour="--hour" in sys.argv)
        local_figures(work, local)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
