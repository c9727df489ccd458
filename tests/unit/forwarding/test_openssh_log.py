"""ssh's own log and stderr, one row of the table per kind of line, and sessions read from them."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.forwarding.evidence import Failure
from dunscaith.domain.model.forwarding.openssh_log import TABLE, Line, classify_line, openssh_evidence

BANNER = "debug1: OpenSSH_9.2p1 Debian-2+deb12u6, OpenSSL 3.0.17 1 Jul 2025"
AUTH = 'debug1: Authenticated to login1 ([10.9.8.11]:22) using "publickey".'

# One sample per row of the table, as OpenSSH 9.2 writes it.
SAMPLES = {
    BANNER: Line.BANNER,
    "debug1: Reading configuration data /home/u/.ssh/config": Line.BANNER,
    AUTH: Line.AUTHENTICATED,
    "Authentication succeeded (publickey).": Line.AUTHENTICATED,
    "debug1: auto-mux: Trying existing master": Line.SHARED,
    "debug1: mux_client_request_session: master session id: 2": Line.SHARED,
    "debug1: Sending command: /opt/ds/bin/dunscaith _forwarded dsf.eyJ": Line.COMMAND_SENT,
    "hpc@login1: Permission denied (publickey).": Line.AUTH_FAILED,
    "Received disconnect from 10.9.8.11 port 22:2: Too many authentication failures": Line.AUTH_FAILED,
    "debug1: No more authentication methods to try.": Line.AUTH_FAILED,
    "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @": Line.HOST_KEY_CHANGED,
    "Host key for login1 has changed and you have requested strict checking.": Line.HOST_KEY_CHANGED,
    "No ED25519 host key is known for login1 and you have requested strict checking.": Line.HOST_KEY_UNKNOWN,
    "Host key verification failed.": Line.HOST_KEY_FAILED,
    "ssh: connect to host login1 port 22: Connection refused": Line.CONNECT_FAILED,
    "ssh: connect to host 10.9.8.13 port 22: Connection timed out": Line.CONNECT_FAILED,
    "ssh: Could not resolve hostname nohost: Name or service not known": Line.CONNECT_FAILED,
    "kex_exchange_identification: read: Connection reset by peer": Line.CONNECT_FAILED,
    "Connection closed by 10.9.8.11 port 22": Line.CONNECT_FAILED,
    "Connection timed out during banner exchange": Line.CONNECT_FAILED,
    "Connection to login1 closed by remote host.": Line.DROPPED,
    "Timeout, server login1 not responding.": Line.DROPPED,
    "client_loop: send disconnect: Broken pipe": Line.DROPPED,
    "packet_write_wait: Connection to 10.9.8.11 port 22: Broken pipe": Line.DROPPED,
    "debug1: Exit status 7": Line.EXIT_STATUS,
}


def test_every_row_of_the_table_has_a_sample() -> None:
    covered = set()
    for line in SAMPLES:
        for pattern, _ in TABLE:
            if pattern.search(line):
                covered.add(pattern.pattern)
    assert covered == {pattern.pattern for pattern, _ in TABLE}


@pytest.mark.parametrize(("line", "meaning"), SAMPLES.items())
def test_each_sample_means_exactly_its_row(line: str, meaning: Line) -> None:
    assert classify_line(line) == {meaning}


@pytest.mark.parametrize("line", ["debug1: Applying options for *", "hello", "",
                                  "debug1: channel 0: new session [client-session] (inactive timeout: 0)"])
def test_ordinary_lines_mean_nothing(line: str) -> None:
    assert classify_line(line) == set()


def test_no_log_proves_nothing() -> None:
    evidence = openssh_evidence("", "Permission denied (publickey).")
    assert not evidence.accounted and evidence.failure is None


@pytest.mark.parametrize(("stderr", "failure"), [
    ("hpc@login1: Permission denied (publickey).", Failure.AUTH),
    ("@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed.",
     Failure.HOST_KEY_CHANGED),
    ("No ED25519 host key is known for login1 and you have requested strict checking.\nHost key verification "
     "failed.", Failure.HOST_KEY_UNKNOWN),
    ("Host key verification failed.", Failure.HOST_KEY),
    ("ssh: connect to host login1 port 22: Connection refused", Failure.CONNECTION),
    ("", Failure.CONNECTION),  # a session stopped before authentication, for whatever reason
])
def test_failures_before_authentication_are_named(stderr: str, failure: Failure) -> None:
    evidence = openssh_evidence(BANNER + "\n", stderr)
    assert evidence.accounted and not evidence.reached and evidence.failure is failure


def test_after_authentication_a_drop_is_reached_without_an_exit_status() -> None:
    evidence = openssh_evidence(f"{BANNER}\n{AUTH}\ndebug1: Exit status -1\n",
                                "Connection to login1 closed by remote host.")
    assert evidence.reached and evidence.host_exit is None
    assert evidence.detail == "Connection to login1 closed by remote host."


def test_a_failure_line_after_authentication_does_not_prove_anything() -> None:
    evidence = openssh_evidence(f"{BANNER}\n{AUTH}\n", "Connection closed by 10.9.8.11 port 22")
    assert evidence.reached and evidence.failure is None


def test_a_session_the_host_ended_carries_its_exit_status() -> None:
    assert openssh_evidence(f"{BANNER}\n{AUTH}\ndebug1: Exit status 127\n", "").host_exit == 127


def test_a_shared_connection_counts_as_reached() -> None:
    log = f"{BANNER}\ndebug1: auto-mux: Trying existing master\n"
    assert openssh_evidence(log, "").reached
