"""A connection dropped mid-command, each way the notes measured: "may have run", never sent again, then the
outcome recovered from the host's record of the instance. And the caller's stdin: held open, its end not
passed on as the end of the session.

The forwarded command is a foreground ``submit`` of a local job that waits for a file: its supervisor
drains on SIGHUP (exit 129) and leaves the job running, so what the host side did is visible.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dunscaith.domain.model.forwarding.recovery import HostState, describe
from dunscaith.domain.model.forwarding.verdict import Kind, Reason
from dunscaith.domain.services.forwarding.forward import Forwarded
from dunscaith.ports.transport import Transport
from tests.infra.forwarding_support import HeldStdin, MemoryStreams, forwarder, hosts_or_skip, openssh_for
from tests.infra.ssh_hosts import SshHosts, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.sshd]


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


def waiting_job(name: str, hosts: SshHosts) -> list[str]:
    go = hosts.user.home / f"go-{name}"
    return ["submit", "--name", name, "--", "/bin/sh", "-c", f"while [ ! -e {go} ]; do sleep 0.1; done; echo done"]


def in_background(call: object) -> tuple[threading.Thread, list[Forwarded]]:
    result: list[Forwarded] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)  # type: ignore[operator]
    thread.start()
    return thread, result


def instance_dirs(hosts: SshHosts, host: str) -> list[str]:
    user = hosts.user.name
    return hosts.inside(host, "ls", "-1", f"/var/tmp/dunscaith-{user}/forwarded", user=user,
                        check=False).stdout.split()


def paramiko_for(hosts: SshHosts) -> Transport:
    from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport

    return ParamikoTransport(config_file=str(hosts.client_config), keepalive=1, user=hosts.user.name,
                             key_file=str(hosts.user.key))


@pytest.mark.parametrize("client", ["openssh", "paramiko"])
@pytest.mark.parametrize("how", ["sshd child killed", "link cut"])
def test_a_connection_dropped_mid_command_may_have_run_is_not_resent_and_its_outcome_is_recovered(
        hosts: SshHosts, tmp_path: Path, how: str, client: str) -> None:
    name = f"drop-{how.split()[0]}-{client}-{tmp_path.name[-6:]}"
    host = "login1" if how == "sshd child killed" else "login3"
    streams = HeldStdin()
    transport = openssh_for(hosts) if client == "openssh" else paramiko_for(hosts)
    forward, _, sent = forwarder(transport, tmp_path, streams, heartbeat=0.5)
    thread, result = in_background(lambda: forward(host, hosts.dunscaith, waiting_job(name, hosts), False))
    try:
        wait_for(lambda: b"released" in streams.stdout, 60, "the forwarded submit to release its job")
        if how == "sshd child killed":
            assert hosts.kill_session_sshd(host) >= 1
        else:
            hosts.cut_link(host)
        thread.join(60)
        assert not thread.is_alive()
        (done,) = result
        assert done.verdict.kind is Kind.MAY_HAVE_RUN
        assert done.message is not None and "MAY HAVE RUN" in done.message
        assert f"dunscaith forwarded {done.request_id}" in done.message
        if how == "link cut":
            hosts.restore_link(host)
        # Sent once: one record here (still marked: it may have run), one instance there, never a second
        # attempt.
        assert sorted(p.name for p in sent.directory.iterdir()) == [
            ".marked-v2", f"{done.request_id}.end.json", f"{done.request_id}.json", f"{done.request_id}.pending"]
        assert [s.request_id for s, _ in sent.unsettled(host)] == [done.request_id]
        assert instance_dirs(hosts, host) .count(done.request_id) == 1
        # The host drained the command when its caller went away: end of input (the sshd child was
        # killed), or no heartbeat (the link was cut, and no end of input ever came).
        recorded, received = sent.read(done.request_id)
        asker, _, _ = forwarder(openssh_for(hosts), tmp_path / "ask")
        reports: list[object] = []

        def ended() -> bool:
            answer = asker.query(recorded)
            reports.append(answer)
            return answer.report is not None and answer.report.state is HostState.ENDED

        wait_for(ended, 60, "the forwarded instance to end on the host")
        report = reports[-1].report  # type: ignore[attr-defined]
        assert report.exit_code == 129  # SIGHUP: the supervisor drained and left the job alone
        lines = describe(recorded, report, received)
        assert "it ran and ended with exit status 129" in lines[0]
        status = hosts.ssh(host, f"{hosts.dunscaith} status {name}")
        assert "running" in status.stdout.lower() or "unattended" in (status.stdout + status.stderr).lower()
    finally:
        (hosts.user.home / f"go-{name}").touch()
        hosts.restore_link(host)


def test_the_caller_s_stdin_is_copied_in_and_its_end_is_not_the_end_of_the_session(hosts: SshHosts,
                                                                                    tmp_path: Path) -> None:
    forward, streams, _ = forwarder(openssh_for(hosts), tmp_path, MemoryStreams(stdin=b"to the command\n"))
    result = forward("login1", hosts.dunscaith, ["remote", "run", "--", "/bin/cat"], terminal=False)
    assert result.verdict.kind is Kind.COMPLETED and result.verdict.exit_code == 0
    assert streams.stdout == b"to the command\n"
    # An empty stdin (< /dev/null) ends at once; a supervisor forwarded with it runs to its job's end.
    name = f"stdin-{tmp_path.name[-6:]}"
    (hosts.user.home / f"go-{name}").touch()
    forward, streams, _ = forwarder(openssh_for(hosts), tmp_path / "empty", MemoryStreams(stdin=b""))
    result = forward("login1", hosts.dunscaith, waiting_job(name, hosts), terminal=False)
    assert result.verdict.kind is Kind.COMPLETED and result.verdict.exit_code == 0, streams.stderr
    assert b"outcome: succeeded" in streams.stdout


def test_the_outcome_of_a_request_that_never_arrived_is_nothing_ran(hosts: SshHosts, tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from dunscaith.domain.model.forwarding.recovery import SentRequest

    forward, _, _ = forwarder(openssh_for(hosts), tmp_path)
    ghost = SentRequest("a" * 32, "login1", hosts.dunscaith, ("status",), datetime.now(UTC))
    answer = forward.query(ghost)
    assert answer.verdict.reason is Reason.EXIT_FRAME and answer.report is not None
    assert answer.report.state is HostState.NOT_ARRIVED
    assert "never arrived" in describe(ghost, answer.report, None)[0]
