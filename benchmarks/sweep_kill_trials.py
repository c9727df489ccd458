"""kill -9 of a sweep's supervisor at random moments, then ``supervise NAME``: every element runs once (issue 23).

Each trial submits a sweep with the real console script in a private HOME, kills the supervisor's process
group with SIGKILL after a random delay (drawn from 0 to ``--within`` seconds: the submit, the array's or
each element's send, the release and the first polls all fall in it), then runs ``supervise NAME``, which
is itself killed the same way with probability ``--again`` before a last ``supervise NAME`` runs to the
end. An element killed after its create was sent and before its answer is unknown, and when the scheduler
does not list its object, that absence is judged after ``supervise.absence`` (30 s here, 10 minutes by
default): then it is tried again as a new attempt, never as a second object of the first. Every element
appends its index to one file; a trial passes when every element is settled
(``status NAME --json``) and each index is in the file exactly once. Nothing is timed.

    .venv/bin/python benchmarks/sweep_kill_trials.py --trials 20 --size 500            # local scheduler
    .venv/bin/python benchmarks/sweep_kill_trials.py --trials 20 --size 500 --slurm    # one job array (root)

``--at POINT[,POINT...]``: one trial per crash point instead (``DUNSCAITH_TEST_CRASH_AT``: the submit kills
itself there, e.g. between a phase's one commit and the request after it), each then as above.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.infra.slurm import shared_cluster

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUNSCAITH_")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
                "DUNSCAITH_RECORDS__ROOT": str(home / "records"), "NO_COLOR": "1",
                "DUNSCAITH_SUPERVISE__POLL": "2", "DUNSCAITH_SUPERVISE__ABSENCE": "30"})
    return env


def _killed_after(argv: list[str], env: dict[str, str], delay: float | None) -> int | None:
    """Run ``argv`` in its own process group; SIGKILL the group after ``delay`` s. Its exit code, or None if
    it was killed."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        code = proc.wait(delay)
        return None if code == -signal.SIGKILL else code
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None


def trial(n: int, work: Path, size: int, within: float, again: float, cluster: list[str], rng: random.Random,
          configure: object, limit: float, point: str | None = None) -> tuple[bool, str]:
    home = work / f"t{n}"
    (home / ".config" / "dunscaith").mkdir(parents=True)
    if callable(configure):
        configure(home)
    env = _env(home)
    ran = home / "ran"
    name = f"k{n}"
    kills = []
    delay = rng.uniform(0.0, within) if point is None else None
    code = _killed_after([DUNSCAITH, "submit", "--name", name, "--array", f"1-{size}", "--max-running", "50",
                          *cluster, "--", "sh", "-c", f"echo {{}} >> {ran}"],
                         env if point is None else {**env, "DUNSCAITH_TEST_CRASH_AT": point}, delay)
    at = f"at {point}" if delay is None else f"at {delay:.2f} s"
    kills.append(f"submit {'killed ' + at if code is None else 'exit ' + str(code)}")
    if code is None and rng.random() < again:
        delay = rng.uniform(0.0, within)
        code = _killed_after([DUNSCAITH, "supervise", name], env, delay)
        kills.append(f"supervise {'killed at ' + format(delay, '.2f') + ' s' if code is None else 'exit ' + str(code)}")
    try:
        last = subprocess.run([DUNSCAITH, "supervise", name], env=env, capture_output=True, text=True,
                              timeout=limit, start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        kept = Path(tempfile.mkdtemp(prefix=f"dunscaith-kill-trial-{n}-"))
        shutil.copytree(home, kept / "home", symlinks=True, ignore_dangling_symlinks=True)
        output = exc.stdout.decode() if isinstance(exc.stdout, bytes) else str(exc.stdout or "")
        return False, (f"trial {n}: {'; '.join(kills)}; the last supervise did not end within {limit:g} s "
                       f"(its home kept in {kept}); it said: ...{output[-600:]}")
    kills.append(f"supervise exit {last.returncode}")
    shown = subprocess.run([DUNSCAITH, "status", name, "--json"], env=env, capture_output=True, text=True)
    found = json.loads(shown.stdout) if shown.stdout.strip() else {}
    elements = found.get("elements", [])
    counts = Counter(ran.read_text().split()) if ran.exists() else Counter()
    if "error" in found and not counts:  # killed before the sweep was recorded: nothing recorded, nothing ran
        kills.append("nothing was recorded (the kill came first), nothing ran")
        return True, f"trial {n}: {'; '.join(kills)}"
    once = counts == Counter(str(i) for i in range(1, size + 1))
    settled = len(elements) == size and all(e["state"] == "succeeded" for e in elements)
    twice = sorted((k for k, v in counts.items() if v > 1), key=int)
    said = (f"trial {n}: {'; '.join(kills)}; every element once: {once}"
            f"{' (ran twice: ' + ', '.join(twice[:10]) + ')' if twice else ''}; all succeeded: {settled}")
    if cluster:
        subprocess.run(["scancel", f"--name={name}"], env=env, capture_output=True, check=False)
    return once and settled, said


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--within", type=float, default=6.0, help="the kill falls within this many seconds")
    parser.add_argument("--again", type=float, default=0.5, help="how often the first supervise is killed too")
    parser.add_argument("--slurm", action="store_true", help="on the project's private Slurm (root)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--limit", type=float, default=900.0, help="seconds the last supervise may take")
    parser.add_argument("--at", default=None, help="crash points, comma-separated: one trial each, no random kill")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="dunscaith-kill-trials-"))
    cluster: list[str] = []
    configure = None
    if args.slurm:
        slurm_env = dict(shared_cluster().env)
        os.environ.update(slurm_env)  # scancel at the end of each trial
        settings = ", ".join(f"{k} = {json.dumps(v)}" for k, v in slurm_env.items())

        def configure(home: Path) -> None:
            (home / ".config" / "dunscaith" / "config.toml").write_text(
                f'[clusters.test]\nadapter = "slurm"\nenv = {{ {settings} }}\n')
        cluster = ["--cluster", "test"]
    points: list[str | None] = args.at.split(",") if args.at else [None] * args.trials
    args.trials = len(points)
    print(f"{args.trials} trials, {args.size} elements each, {'Slurm' if args.slurm else 'local'}, kill within "
          f"{args.within:g} s, seed {seed}", flush=True)
    passed = 0
    started = time.monotonic()
    try:
        for n, point in enumerate(points, start=1):
            ok, said = trial(n, work, args.size, args.within, args.again, cluster, rng, configure, args.limit, point)
            passed += ok
            print(said, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} of {args.trials} trials ran every element exactly once and settled every one "
          f"({time.monotonic() - started:.0f} s)")
    return 0 if passed == args.trials else 1


if __name__ == "__main__":
    sys.exit(main())
