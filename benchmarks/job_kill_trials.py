"""kill -9 of one job's supervisor at random moments, then ``supervise NAME``: the job runs once (issue 37).

The single job's counterpart of ``sweep_kill_trials.py`` (whose helpers it uses): each trial submits a job
with the real console script in a private HOME, kills the supervisor's process group with SIGKILL after a
random delay (0 to ``--within`` seconds: the record, the create, its answer, the release and the first polls
fall in it), then runs ``supervise NAME`` (itself killed the same way with probability ``--again``) and a last
``supervise NAME`` to the end. The job appends one line to a file; a trial passes when the job succeeded
(``status NAME --json``) and the file has exactly one line, or nothing was recorded and nothing ran. With
``--at POINT[,POINT...]`` one trial per crash point instead (``DUNSCAITH_TEST_CRASH_AT``). Nothing is timed.

    .venv/bin/python benchmarks/job_kill_trials.py --trials 20 --within 8  # local scheduler
    .venv/bin/python benchmarks/job_kill_trials.py --trials 20 --slurm     # the project's private Slurm (root)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from sweep_kill_trials import DUNSCAITH, _env, _killed_after

from tests.infra.slurm import shared_cluster


def trial(n: int, work: Path, within: float, again: float, cluster: list[str], rng: random.Random,
          configure: object, limit: float, point: str | None) -> tuple[bool, str]:
    home = work / f"t{n}"
    (home / ".config" / "dunscaith").mkdir(parents=True)
    if callable(configure):
        configure(home)
    env = _env(home)
    ran = home / "ran"
    name = f"j{n}"
    kills: list[str] = []
    delay = rng.uniform(0.0, within) if point is None else None
    code = _killed_after([DUNSCAITH, "submit", "--name", name, *cluster, "--", "sh", "-c", f"echo x >> {ran}"],
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
    except subprocess.TimeoutExpired:
        return False, f"trial {n}: {'; '.join(kills)}; the last supervise did not end within {limit:g} s"
    kills.append(f"supervise exit {last.returncode}")
    shown = subprocess.run([DUNSCAITH, "status", name, "--json"], env=env, capture_output=True, text=True)
    found = json.loads(shown.stdout) if shown.stdout.strip() else {}
    lines = ran.read_text().splitlines() if ran.exists() else []
    if "error" in found and not lines:  # killed before the job was recorded: nothing recorded, nothing ran
        kills.append("nothing was recorded (the kill came first), nothing ran")
        return True, f"trial {n}: {'; '.join(kills)}"
    if cluster:
        subprocess.run(["scancel", f"--name={name}"], env=env, capture_output=True, check=False)
    ok = len(lines) == 1 and found.get("state") == "succeeded"
    return ok, (f"trial {n}: {'; '.join(kills)}; ran {len(lines)} time(s); state {found.get('state')}; "
                f"attempts {len(found.get('attempts', []))}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--within", type=float, default=8.0, help="the kill falls within this many seconds")
    parser.add_argument("--again", type=float, default=0.5, help="how often the first supervise is killed too")
    parser.add_argument("--slurm", action="store_true", help="on the project's private Slurm (root)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--limit", type=float, default=300.0, help="seconds the last supervise may take")
    parser.add_argument("--at", default=None, help="crash points, comma-separated: one trial each, no random kill")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    work = Path(tempfile.mkdtemp(prefix="dunscaith-job-kill-trials-"))
    cluster: list[str] = []
    configure = None
    if args.slurm:
        slurm_env = dict(shared_cluster().env)
        os.environ.update(slurm_env)
        settings = ", ".join(f"{k} = {json.dumps(v)}" for k, v in slurm_env.items())

        def configure(home: Path) -> None:
            (home / ".config" / "dunscaith" / "config.toml").write_text(
                f'[clusters.test]\nadapter = "slurm"\nenv = {{ {settings} }}\n')
        cluster = ["--cluster", "test"]
    points: list[str | None] = args.at.split(",") if args.at else [None] * args.trials
    print(f"{len(points)} trials of one job, {'Slurm' if args.slurm else 'local'}, kill within {args.within:g} s, "
          f"seed {seed}", flush=True)
    passed = 0
    started = time.monotonic()
    try:
        for n, point in enumerate(points, start=1):
            ok, said = trial(n, work, args.within, args.again, cluster, rng, configure, args.limit, point)
            passed += ok
            print(said, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} of {len(points)} trials ran the job exactly once and settled it "
          f"({time.monotonic() - started:.0f} s)")
    return 0 if passed == len(points) else 1


if __name__ == "__main__":
    sys.exit(main())
