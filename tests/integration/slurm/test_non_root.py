"""A non-root user submits through the adapter: their objects are theirs, and foreign to root."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
from dunscaith.domain.model.jobs.objects import ObjectState
from tests.expect import present
from tests.infra.slurm import SlurmTestCluster
from tests.integration.slurm.conftest import new_name, only_view

pytestmark = [pytest.mark.slow, pytest.mark.slurm]

USER = "dunscaith-slurmt"
REPO = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent("""
    import json, sys, time
    from dunscaith.adapters.scheduler.slurm import SlurmCliScheduler, SlurmClusterConfig
    from dunscaith.domain.model.jobs.objects import ENDED, ObjectSpec
    conf, name, nonce, workdir = sys.argv[1:5]
    s = SlurmCliScheduler(SlurmClusterConfig(env={"SLURM_CONF": conf}))
    answer = s.create_held(ObjectSpec(name, nonce, command=("sh", "-c", "id -un; exit 4"), workdir=workdir))
    kept = s.create_held(ObjectSpec(name, nonce + "-kept", command=("true",), workdir=workdir))
    held = [v for v in s.query([name], confirm_absent=True).objects if v.object_id == answer.object_id][0]
    s.release(answer.object_id)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        view = [v for v in s.query([name], confirm_absent=True).objects if v.object_id == answer.object_id][0]
        if view.state in ENDED:
            break
        time.sleep(0.5)
    print(json.dumps({"id": answer.object_id, "kept": kept.object_id, "outcome": answer.outcome, "user": s.user,
                      "held": [held.state, held.owner, held.nonce], "end": [view.state, view.exit_code, view.owner]}))
""")


@pytest.fixture(scope="module")
def user() -> str:
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/bin/sh", USER], check=True)
    return USER


def test_a_non_root_user_submits_releases_and_reads_their_exit_code(slurm_cluster: SlurmTestCluster, user: str) -> None:
    home = slurm_cluster.root / "home" / user
    home.mkdir(parents=True, exist_ok=True)
    entry = pwd.getpwnam(user)
    os.chown(home, entry.pw_uid, entry.pw_gid)
    name, nonce = new_name()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    # The test venv's interpreter may live where only root can reach it (pyenv under /root); the
    # adapter needs nothing but the standard library, so the system Python 3.11 serves the user.
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    done = subprocess.run(
        ["runuser", "-u", user, "--", "env", *[f"{k}={v}" for k, v in env.items()], python, "-c", SCRIPT,
         str(slurm_cluster.conf), name, nonce, str(home)],
        capture_output=True, text=True, timeout=120, cwd=str(home),
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["outcome"] == "created" and out["user"] == user
    assert out["held"] == ["held", user, nonce]
    assert out["end"] == ["failed", 4, user]
    assert (home / f"slurm-{out['id']}.out").read_text() == f"{user}\n"

    # Seen from root, the object is another user's: foreign, and root's emergency stop leaves it alone.
    as_root = SlurmCliScheduler(SlurmClusterConfig(env=slurm_cluster.env))
    root_view = present(only_view(as_root.query([name], confirm_absent=True), out["id"]))
    assert root_view.owner == user and root_view.state is ObjectState.FAILED
    # Its held object too: root's cancel_if_not_started and stop_by_name (--user=root) leave it held.
    assert as_root.cancel_if_not_started([out["kept"]]) == []
    assert as_root.stop_by_name(name) == []
    kept = present(only_view(as_root.query([name], confirm_absent=False), out["kept"]))
    assert (kept.owner, kept.state) == (user, ObjectState.HELD)
    slurm_cluster.run("scancel", out["kept"])
