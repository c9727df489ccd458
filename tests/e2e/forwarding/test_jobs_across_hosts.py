"""The job commands typed on login2 for a job submitted on login1 (real sshd hosts, the real CLI as the user).

Each is forwarded to login1, committed there under the job's lock (answered by its live supervisor),
and exits as it would there; nothing is recorded on login2.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.infra.forwarding_support import hosts_or_skip
from tests.infra.ssh_hosts import NOISE, SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


def out(done: subprocess.CompletedProcess[str]) -> str:
    """What the command printed, without the test user's own startup-file line (the outer ssh's, not ours)."""
    return "".join(line for line in done.stdout.splitlines(keepends=True) if line.strip() != NOISE)


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


def test_status_hold_release_supervise_and_cancel_from_login2_act_on_login1(hosts: SshHosts, tmp_path: Path) -> None:
    ds = hosts.dunscaith
    job = f"x-{tmp_path.name[-6:]}"
    go = hosts.user.home / f"go-{job}"
    submit = hosts.popen("login1", f"{ds} submit --name {job} -- /bin/sh -c 'while [ ! -e {go} ]; do sleep 0.1; done'",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = bytearray()
    try:
        import os

        os.set_blocking(submit.stdout.fileno(), False)  # type: ignore[union-attr]

        def running() -> bool:
            seen.extend(submit.stdout.read() or b"")  # type: ignore[union-attr]
            return b"is running" in seen

        wait_for(running, 60, "the job to run on login1")
        # status: the same answer as on login1 itself
        here = hosts.ssh("login1", f"{ds} status {job} --json")
        there = hosts.ssh("login2", f"{ds} status {job} --json")
        assert there.returncode == here.returncode == 0, there.stderr
        mine, theirs = json.loads(out(here)), json.loads(out(there))
        assert theirs["job"] == job and theirs["state"] == mine["state"] == "running"
        assert theirs["supervisor"]["held"] is True
        # hold and release: answered by the live supervisor on login1 (a running object cannot be held)
        hold = hosts.ssh("login2", f"{ds} hold {job}")
        assert hold.returncode == 2 and "hold refused by its supervisor" in hold.stdout + hold.stderr
        release = hosts.ssh("login2", f"{ds} release {job}")
        assert release.returncode == 2 and "release" in release.stdout + release.stderr
        # supervise: refused there while the live supervisor holds the job
        again = hosts.ssh("login2", f"{ds} supervise {job}")
        assert again.returncode == 2 and "locked" in again.stderr
        # cancel: confirmed by the supervisor, which ends the job cancelled on login1
        cancel = hosts.ssh("login2", f"{ds} cancel {job}")
        assert cancel.returncode == 0 and "cancel confirmed by its supervisor" in cancel.stdout
        assert submit.wait(60) == 1  # the foreground supervisor on login1: outcome cancelled
        record = json.loads(out(hosts.ssh("login1", f"{ds} status {job} --json")))
        assert record["outcome"]["result"] == "cancelled"
        assert [r["action"] for r in record["requests"]] == ["hold", "release", "cancel"]
        # Nothing of the job on login2: no record store was even made there (no test submits on login2).
        assert hosts.ssh("login2", f"ls /var/tmp/dunscaith-{hosts.user.name}/records.db").returncode != 0
        # The pointer was written on login1 only, with the last state it committed.
        final = hosts.ssh("login2", f"{ds} status {job}")
        assert final.returncode == 1 and "cancelled" in final.stdout  # exits as a cancelled job's status
    finally:
        go.touch()
        if submit.poll() is None:
            submit.kill()


def test_a_forwarded_command_on_a_host_whose_job_is_elsewhere_again_is_refused(hosts: SshHosts) -> None:
    """A pointer naming login3 for a job forwarded to login2: the forwarded command never forwards again."""
    ds = hosts.dunscaith
    job = "loop-guard"
    pointer = {"version": 1, "job": job, "host": "login2", "record_root": "/var/tmp/x", "root_machine_id": "0" * 32,
               "root_hostname": "nowhere", "binary": ds, "cluster": "local", "adapter": "local", "state": "running",
               "state_at": "2026-01-01T00:00:00+00:00", "supervised_at": None}
    path = hosts.user.home / ".config" / "dunscaith" / "jobs" / job
    # the folder made by the user (as a command would make it): one made by root here would refuse every
    # later pointer of the session's shared home (owned by uid 0), whichever test runs next
    subprocess.run(["runuser", "-u", hosts.user.name, "--", "mkdir", "-p", "-m", "700", str(path.parent)], check=True)
    path.write_text(json.dumps(pointer))
    import shutil

    shutil.chown(path, hosts.user.name, hosts.user.name)
    try:
        done = hosts.ssh("login1", f"{ds} status {job}")
        assert done.returncode == 2
        assert "a forwarded command never forwards again" in done.stderr
    finally:
        path.unlink()


def test_a_forwarded_supervise_dropped_mid_command_may_have_run_and_is_recovered_from_any_node(
        hosts: SshHosts, tmp_path: Path) -> None:
    import os
    import re

    ds = hosts.dunscaith
    job = f"u-{tmp_path.name[-6:]}"
    go = hosts.user.home / f"go-{job}"
    submit = hosts.popen("login1", f"{ds} submit --name {job} -- /bin/sh -c 'while [ ! -e {go} ]; do sleep 0.1; done'",
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    supervise = None
    try:
        os.set_blocking(submit.stdout.fileno(), False)  # type: ignore[union-attr]
        seen = bytearray()

        def running() -> bool:
            seen.extend(submit.stdout.read() or b"")  # type: ignore[union-attr]
            return b"is running" in seen

        wait_for(running, 60, "the job to run on login1")
        hosts.inside("login1", "pkill", "-HUP", "-f", f"dunscaith submit --name {job}", check=False)
        submit.wait(60)  # the supervisor drained on SIGHUP and died by it (ssh says 255 for that)
        wait_for(lambda: "Unattended" in hosts.ssh("login1", f"{ds} status {job}").stdout, 30, "Unattended")
        # Reattach from login2: forwarded to login1, in the foreground over ssh.
        supervise = hosts.popen("login2", f"{ds} supervise {job}", stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        os.set_blocking(supervise.stdout.fileno(), False)  # type: ignore[union-attr]
        progress = bytearray()

        def reattached() -> bool:
            progress.extend(supervise.stdout.read() or b"")  # type: ignore[union-attr]
            if supervise.poll() is not None:
                raise AssertionError(f"supervise ended: {progress!r} {supervise.stderr.read()!r}")  # type: ignore
            return b"supervising" in progress

        wait_for(reattached, 60, "the forwarded supervise to report the job")
        assert hosts.kill_session_sshd("login1") >= 1  # the hop login2 -> login1 drops
        assert supervise.wait(60) == 6
        stderr = supervise.stderr.read().decode()  # type: ignore[union-attr]
        assert "MAY HAVE RUN" in stderr and "does not send it again" in stderr
        rid = re.search(r"dunscaith forwarded ([0-9a-f]{32})", stderr).group(1)  # type: ignore[union-attr]

        def told() -> str:
            return out(hosts.ssh("login3", f"{ds} forwarded {rid}"))

        wait_for(lambda: "ended with exit status" in told(), 60, "the owning host to record the end")
        answer = told()
        assert f"request {rid} (supervise {job}) on login1: it ran and ended with exit status 129" in answer
        assert "you received" in answer
    finally:
        go.touch()
        for process in (submit, supervise):
            if process is not None and process.poll() is None:
                process.kill()


def test_from_the_cli_a_changed_host_key_and_a_failed_login_are_never_ran(hosts: SshHosts) -> None:
    ds = hosts.dunscaith
    pointer = {"version": 1, "job": "keyed", "host": "login3", "record_root": "/var/tmp/x",
               "root_machine_id": "0" * 32, "root_hostname": "login3", "binary": ds, "cluster": "local",
               "adapter": "local", "state": "running", "state_at": "2026-01-01T00:00:00+00:00",
               "supervised_at": None}
    path = hosts.user.home / ".config" / "dunscaith" / "jobs" / "keyed"
    # the folder made by the user (as a command would make it): one made by root here would refuse every
    # later pointer of the session's shared home (owned by uid 0), whichever test runs next
    subprocess.run(["runuser", "-u", hosts.user.name, "--", "mkdir", "-p", "-m", "700", str(path.parent)], check=True)
    path.write_text(json.dumps(pointer))
    import shutil

    shutil.chown(path, hosts.user.name, hosts.user.name)
    hosts.change_host_key("login3")
    try:
        done = hosts.ssh("login2", f"{ds} cancel keyed")
        assert done.returncode == 2
        assert "the host key of login3 has changed" in done.stderr and "nothing ran on login3" in done.stderr
    finally:
        hosts.write_known_hosts()
    # A login that fails: an ssh config (forwarding.ssh_config) whose only key login3 does not accept.
    stranger = hosts.user.home / "stranger"
    subprocess.run(["runuser", "-u", hosts.user.name, "--", "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                    str(stranger)], check=True)
    bad = hosts.user.home / "bad_ssh_config"
    bad.write_text((hosts.user.home / ".ssh" / "config").read_text().replace("~/.ssh/id_ed25519", str(stranger))
                   + "    IdentitiesOnly yes\n")
    shutil.chown(bad, hosts.user.name, hosts.user.name)
    try:
        done = hosts.ssh("login2", f"DUNSCAITH_FORWARDING__SSH_CONFIG={bad} {ds} cancel keyed")
        assert done.returncode == 2
        assert "could not log in to login3" in done.stderr and "nothing ran on login3" in done.stderr
    finally:
        for leftover in (bad, stranger, stranger.with_suffix(".pub")):
            leftover.unlink(missing_ok=True)
        path.unlink()
