"""Seed 000's forwarding rules, each a named test, on real sshd login nodes (tests/infra/ssh_hosts.py).

The caller is this test process (the OpenSSH client, as the test user); the host side is the project's
dunscaith installed on the hosts. A forwarded command is any dunscaith invocation; these use
``remote run -- PROGRAM`` where only a plain program shows the rule best.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from dunscaith.domain.model.forwarding.evidence import Failure
from dunscaith.domain.model.forwarding.request import ForwardRequest, Kind, encode_token, remote_command, token_line
from dunscaith.domain.model.forwarding.verdict import Kind as VerdictKind
from dunscaith.domain.model.forwarding.verdict import Reason, classify
from tests.infra.forwarding_support import forwarder, hosts_or_skip, openssh_for
from tests.infra.ssh_hosts import NOISE, SshHosts

pytestmark = [pytest.mark.slow, pytest.mark.sshd]

HOSTILE = ["$(touch ~/pwned-dollar)", "`touch ~/pwned-backtick`", "a; touch ~/pwned-semicolon", "two\nlines",
           "'single'", '"double"', "!!", "!$ history", "\\back", "*", "~", "${HOME}", "a&&b", "|cat", "#hash"]


@pytest.fixture(scope="module")
def hosts() -> SshHosts:
    return hosts_or_skip()


def printf_argv(words: list[str]) -> list[str]:
    return ["remote", "run", "--", "/usr/bin/printf", "[%s]\\n", *words]


def instances(hosts: SshHosts, host: str, user: str | None = None) -> list[str]:
    user = user or hosts.user.name
    done = hosts.inside(host, "ls", "-1", f"/var/tmp/dunscaith-{user}/forwarded", user=user, check=False)
    return done.stdout.split()


@pytest.mark.parametrize("shell", ["bash", "tcsh"])
def test_arguments_travel_as_one_token_and_arrive_unchanged_under_bash_and_tcsh(hosts: SshHosts, tmp_path: Path,
                                                                                 shell: str) -> None:
    user = hosts.users[shell]
    forward, streams, _ = forwarder(openssh_for(hosts, user), tmp_path)
    result = forward("login1", hosts.dunscaith, printf_argv(HOSTILE), terminal=False)
    assert result.verdict.kind is VerdictKind.COMPLETED and result.verdict.exit_code == 0, streams.stderr
    assert streams.stdout.decode() == "".join(f"[{word}]\n" for word in HOSTILE)
    assert not list(user.home.glob("pwned-*"))  # no shell ran any part of an argument


def test_startup_file_output_outside_the_frames_is_discarded(hosts: SshHosts, tmp_path: Path) -> None:
    for user in hosts.users.values():
        assert NOISE in hosts.ssh("login1", "true", user).stdout  # the startup files do print
        forward, streams, _ = forwarder(openssh_for(hosts, user), tmp_path / user.name)
        forward("login1", hosts.dunscaith, printf_argv(["only this"]), terminal=False)
        assert streams.stdout == b"[only this]\n"
        assert NOISE.encode() not in streams.stderr


def test_the_remote_exit_status_travels_in_the_frames_even_255(hosts: SshHosts, tmp_path: Path) -> None:
    forward, _, _ = forwarder(openssh_for(hosts), tmp_path)
    for code in (0, 3, 255):
        result = forward("login1", hosts.dunscaith, ["remote", "run", "--", "/bin/sh", "-c", f"exit {code}"], False)
        assert result.verdict.kind is VerdictKind.COMPLETED
        assert result.verdict.exit_code == code


def test_a_forwarded_command_refuses_to_forward_again(hosts: SshHosts, tmp_path: Path) -> None:
    inner = encode_token(ForwardRequest("e" * 32, Kind.RUN, ("status",), "0", "x", 1.0, False))
    forward, streams, _ = forwarder(openssh_for(hosts), tmp_path)
    result = forward("login1", hosts.dunscaith, ["_forwarded", inner], terminal=False)
    assert result.verdict.exit_code == 2
    assert b"a forwarded command never forwards again" in streams.stderr
    assert "e" * 32 not in instances(hosts, "login1")


def test_a_protocol_the_host_does_not_know_is_refused_naming_both(hosts: SshHosts) -> None:
    body = {"protocol": 3, "caller_version": "9.0.0", "request_id": "f" * 32, "argv": ["status"]}
    token = "dsf." + base64.urlsafe_b64encode(json.dumps(body).encode()).decode().rstrip("=")
    channel = openssh_for(hosts).open("login1", remote_command(hosts.dunscaith, token), False, False)
    channel.close_input()
    while channel.receive(1.0) != b"":
        pass
    evidence = channel.finish(10)
    verdict = classify(evidence, hello_seen=False, final=None)
    assert verdict.kind is VerdictKind.NEVER_RAN and verdict.reason is Reason.NOT_STARTED
    assert "protocol 3" in verdict.detail and "protocol 2" in verdict.detail
    assert "dunscaith 9.0.0" in verdict.detail and "nothing was run" in verdict.detail
    assert "f" * 32 not in instances(hosts, "login1")


@pytest.mark.parametrize("sent", ["nothing", "an unknown protocol"])
def test_a_session_whose_token_on_stdin_never_comes_or_is_refused_ran_nothing(hosts: SshHosts, sent: str) -> None:
    # Without a terminal the session starts before the request is recorded, its token to follow on stdin.
    channel = openssh_for(hosts).open("login1", remote_command(hosts.dunscaith), False, False)
    if sent != "nothing":
        body = {"protocol": 3, "caller_version": "9.0.0", "request_id": "c" * 32, "argv": ["status"]}
        channel.send(token_line("dsf." + base64.urlsafe_b64encode(json.dumps(body).encode()).decode().rstrip("=")))
    channel.close_input()
    while channel.receive(1.0) != b"":
        pass
    verdict = classify(channel.finish(10), hello_seen=False, final=None)
    assert verdict.kind is VerdictKind.NEVER_RAN and verdict.reason is Reason.NOT_STARTED
    if sent == "nothing":
        assert "no request arrived" in verdict.detail
    else:
        assert "protocol 3" in verdict.detail and "dunscaith 9.0.0" in verdict.detail
    assert "c" * 32 not in instances(hosts, "login1")


def test_the_same_protocol_from_another_version_runs_with_a_warning(hosts: SshHosts, tmp_path: Path) -> None:
    forward, streams, _ = forwarder(openssh_for(hosts), tmp_path, version="9.9.9")
    result = forward("login1", hosts.dunscaith, printf_argv(["ran"]), terminal=False)
    assert result.verdict.kind is VerdictKind.COMPLETED and streams.stdout == b"[ran]\n"
    assert result.warnings and "9.9.9" in result.warnings[0]
    assert b"warning" in streams.stderr and b"9.9.9" in streams.stderr


def test_an_authentication_failure_is_never_ran(hosts: SshHosts, tmp_path: Path) -> None:
    stranger = tmp_path / "stranger"
    import subprocess

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    config = tmp_path / "ssh_config"  # the same hosts, but only a key the host does not accept
    config.write_text(hosts.client_config.read_text().replace(f"IdentityFile {hosts.user.key}",
                                                                f"IdentityFile {stranger}"))
    transport = openssh_for(hosts)
    transport.config_file = str(config)
    transport.options = (f"User={hosts.user.name}", "IdentitiesOnly=yes")
    forward, _, sent = forwarder(transport, tmp_path)
    before = instances(hosts, "login1")
    result = forward("login1", hosts.dunscaith, printf_argv(["x"]), terminal=False)
    assert result.verdict.kind is VerdictKind.NEVER_RAN and result.verdict.reason is Reason.AUTH
    assert result.message is not None and "nothing ran on login1" in result.message
    assert instances(hosts, "login1") == before
    assert sent.read(result.request_id)[1] is not None  # recorded, and its end too


def test_a_changed_host_key_is_refused_and_never_relaxed(hosts: SshHosts, tmp_path: Path) -> None:
    before = instances(hosts, "login3")
    hosts.change_host_key("login3")
    try:
        forward, _, _ = forwarder(openssh_for(hosts), tmp_path)
        result = forward("login3", hosts.dunscaith, printf_argv(["x"]), terminal=False)
        assert result.verdict.kind is VerdictKind.NEVER_RAN
        assert result.verdict.reason is Reason.HOST_KEY_CHANGED
        assert result.message is not None and "never relaxes host key checking" in result.message
        assert instances(hosts, "login3") == before
    finally:
        hosts.write_known_hosts()


def test_a_refused_connection_is_never_ran(hosts: SshHosts, tmp_path: Path) -> None:
    forward, _, _ = forwarder(openssh_for(hosts, None, "Port=2"), tmp_path)
    result = forward("login1", hosts.dunscaith, printf_argv(["x"]), terminal=False)
    assert result.verdict.kind is VerdictKind.NEVER_RAN and result.verdict.reason is Reason.CONNECTION
    assert "Connection refused" in result.verdict.detail


def test_the_paramiko_transport_reports_the_same_never_ran_failures(hosts: SshHosts, tmp_path: Path) -> None:
    from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport

    def paramiko(**kw: object) -> ParamikoTransport:
        args: dict[str, object] = dict(config_file=str(hosts.client_config), keepalive=1, user=hosts.user.name,
                                       key_file=str(hosts.user.key))
        args.update(kw)
        return ParamikoTransport(**args)  # type: ignore[arg-type]

    stranger = tmp_path / "stranger"
    import subprocess

    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    unknown = tmp_path / "known_hosts"
    unknown.write_text("")
    cases = [(paramiko(key_file=str(stranger)), Failure.AUTH), (paramiko(port=2), Failure.CONNECTION),
             (paramiko(known_hosts=[str(unknown)]), Failure.HOST_KEY_UNKNOWN)]
    for transport, failure in cases:
        channel = transport.open("login1", "true", False, False)
        evidence = channel.finish(5)
        assert not evidence.reached and evidence.failure is failure
    hosts.change_host_key("login3")
    try:
        assert paramiko().open("login3", "true", False, False).finish(5).failure is Failure.HOST_KEY_CHANGED
    finally:
        hosts.write_known_hosts()


def test_paramiko_loads_known_hosts_with_cert_authority_lines(hosts: SshHosts, tmp_path: Path) -> None:
    from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport

    known = tmp_path / "known_hosts"
    known.write_text("@cert-authority *.example.org ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB1I6R3mX0Ac9gC5mfBlkDaJ"
                     "rJm8ae6fJ3rVpX3Y2Q6c\n# a comment\n" + hosts.known_hosts.read_text())
    transport = ParamikoTransport(config_file=str(hosts.client_config), user=hosts.user.name,
                                  key_file=str(hosts.user.key), known_hosts=[str(known)])
    forward, streams, _ = forwarder(transport, tmp_path)
    result = forward("login1", hosts.dunscaith, printf_argv(["via paramiko"]), terminal=False)
    assert result.verdict.kind is VerdictKind.COMPLETED and streams.stdout == b"[via paramiko]\n"


def test_paramiko_never_prompts_for_an_encrypted_key_and_prints_nothing(hosts: SshHosts, tmp_path: Path,
                                                                        capfd: pytest.CaptureFixture[str]) -> None:
    import subprocess

    from dunscaith.adapters.transport.paramiko_ssh import ParamikoTransport

    locked = tmp_path / "locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a passphrase", "-f", str(locked)], check=True)
    capfd.readouterr()
    transport = ParamikoTransport(config_file=str(hosts.client_config), user=hosts.user.name, key_file=str(locked))
    evidence = transport.open("login1", "true", False, False).finish(5)
    assert not evidence.reached and evidence.failure is Failure.AUTH
    assert capfd.readouterr() == ("", "")  # no prompt, on stdout or anywhere


def test_the_host_keeps_the_command_s_output_and_instance_and_no_copy_of_the_environment(hosts: SshHosts,
                                                                                        tmp_path: Path) -> None:
    forward, _, _ = forwarder(openssh_for(hosts), tmp_path)
    result = forward("login1", hosts.dunscaith, printf_argv(["kept"]), terminal=False)
    user = hosts.user.name
    folder = f"/var/tmp/dunscaith-{user}/forwarded/{result.request_id}"
    listed = hosts.inside("login1", "ls", "-1", folder, user=user).stdout.split()
    assert sorted(listed) == ["instance", "lock", "stderr", "stdout"]
    assert hosts.inside("login1", "cat", f"{folder}/stdout", user=user).stdout == "[kept]\n"
