"""The forwarding use case on a scripted transport: recorded before sending, never retried, a prompt only
after an authentication failure at a terminal, heartbeats, silence, cancellation."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.transport.openssh import OpenSshTransport
from dunscaith.domain.model.forwarding.evidence import Failure, SessionEvidence
from dunscaith.domain.model.forwarding.frames import (
    ExitStatus,
    FrameKind,
    FrameReader,
    Hello,
    encode_data,
    encode_json,
    exit_payload,
    hello_payload,
)
from dunscaith.domain.model.forwarding.recovery import Received, SentRequest
from dunscaith.domain.model.forwarding.request import decode_token
from dunscaith.domain.model.forwarding.verdict import Kind, Reason
from dunscaith.domain.services.forwarding.forward import ForwardCommand
from dunscaith.ports.forwarding import UnknownRequest
from tests.infra.forwarding_support import HeldStdin, MemoryStreams

RID = "ab" * 16
DIGEST = "blake3:" + "0" * 64


@dataclass
class Script:
    """One session: what the host sends, and what the session proves at its end."""

    output: list[bytes]
    evidence: SessionEvidence
    end_after: bool = True  # stdout ends after the output (else it goes silent)


@dataclass
class ScriptedChannel:
    script: Script
    clock: FakeClock
    sent: bytearray = field(default_factory=bytearray)
    input_closed: bool = False
    aborted: bool = False
    log: list[str] | None = None

    def send(self, data: bytes) -> bool:
        if self.log is not None:
            self.log.append("send")
        self.sent += data
        return True

    def token(self) -> str:
        """The first line sent: the token of a session whose command line says ``-``."""
        line, newline, _ = bytes(self.sent).partition(b"\n")
        assert newline
        return line.decode()

    def receive(self, timeout: float) -> bytes | None:
        if self.script.output:
            return self.script.output.pop(0)
        if self.script.end_after or self.aborted:
            return b""
        self.clock.advance(seconds=max(timeout, 0.1))  # silence: time passes
        return None

    def close_input(self) -> None:
        self.input_closed = True

    def abort(self) -> None:
        self.aborted = True

    def finish(self, timeout: float) -> SessionEvidence:
        return self.script.evidence


@dataclass
class ScriptedTransport:
    scripts: list[Script]
    clock: FakeClock
    name: str = "scripted"
    opened: list[tuple[str, str, bool, bool]] = field(default_factory=list)
    channels: list[ScriptedChannel] = field(default_factory=list)
    log: list[str] | None = None

    def open(self, host: str, command: str, terminal: bool, prompt: bool) -> ScriptedChannel:
        if self.log is not None:
            self.log.append("open")
        self.opened.append((host, command, terminal, prompt))
        channel = ScriptedChannel(self.scripts.pop(0), self.clock, log=self.log)
        self.channels.append(channel)
        return channel


@dataclass
class MemorySent:
    log: list[str] | None = None
    sent: dict[str, SentRequest] = field(default_factory=dict)
    received: dict[str, Received] = field(default_factory=dict)

    def record(self, sent: SentRequest) -> None:
        if self.log is not None:
            self.log.append("record")
        self.sent[sent.request_id] = sent

    def ended(self, got: Received) -> None:
        self.received[got.request_id] = got

    def read(self, request_id: str) -> tuple[SentRequest, Received | None]:
        if request_id not in self.sent:
            raise UnknownRequest(request_id)
        return self.sent[request_id], self.received.get(request_id)

    settled: dict[str, str] = field(default_factory=dict)

    def unsettled(self, host: str) -> list[tuple[SentRequest, Received | None]]:
        return [(s, self.received.get(r)) for r, s in self.sent.items() if s.host == host and r not in self.settled
                and (r not in self.received or self.received[r].verdict == "may have run")]

    def settle(self, request_id: str, outcome: str) -> None:
        self.settled[request_id] = outcome

    expired: list[datetime] = field(default_factory=list)

    def expire(self, now: datetime, kept: timedelta) -> int:
        self.expired.append(now)
        return 0


def frames(*parts: bytes) -> list[bytes]:
    return list(parts)


HELLO = encode_json(RID, FrameKind.HELLO, hello_payload(Hello(1, "0.1.0", "login1")))
def completed() -> Script:
    return Script(frames(HELLO, *encode_data(RID, FrameKind.OUT, b"out\n"),
                         encode_json(RID, FrameKind.EXIT, exit_payload(ExitStatus(3, 4, DIGEST)))),
                  SessionEvidence(True, True, None, 3, ""))


def auth_failed() -> Script:
    return Script([], SessionEvidence(True, False, Failure.AUTH, None, "Permission denied (publickey)."))


def dropped() -> Script:
    return Script(frames(HELLO), SessionEvidence(True, True, None, None, "Connection to login1 closed by remote host."))


def use_case(scripts: list[Script], streams: MemoryStreams | None = None, log: list[str] | None = None,
             cancellation: object = None) -> tuple[ForwardCommand, ScriptedTransport, MemorySent, MemoryStreams]:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    transport = ScriptedTransport(scripts, clock, log=log)
    sent = MemorySent(log)
    streams = streams or MemoryStreams()
    command = ForwardCommand(transport, sent, streams, clock, lambda: RID, "0.1.0", "login2",
                             cancellation=cancellation, heartbeat_seconds=1.0)  # type: ignore[arg-type]
    return command, transport, sent, streams


def test_the_request_is_recorded_before_any_byte_of_it_is_sent() -> None:
    # Without a terminal the session starts first (ssh connects meanwhile), with ``-`` for its token on
    # its command line; the token, the request itself, is its first input, written once it is recorded.
    log: list[str] = []
    command, transport, sent, streams = use_case([completed()], log=log)
    result = command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False)
    assert log[:3] == ["open", "record", "send"]
    assert transport.opened[0][1] == "/opt/ds/bin/dunscaith _forwarded -"
    assert decode_token(transport.channels[0].token(), "0.1.0").request_id == RID
    assert result.verdict.kind is Kind.COMPLETED and result.verdict.exit_code == 3
    assert streams.stdout == b"out\n"
    assert sent.received[RID].stdout_bytes == 4


def test_a_terminal_session_opens_only_once_its_request_is_recorded() -> None:
    log: list[str] = []
    command, transport, _, _ = use_case([completed()], log=log)
    command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], True)
    assert log[:2] == ["record", "open"]  # its token is on its command line
    binary, entry, token = transport.opened[0][1].split(" ")
    assert (binary, entry) == ("/opt/ds/bin/dunscaith", "_forwarded")
    assert decode_token(token, "0.1.0").request_id == RID


def test_a_session_started_sooner_is_used_and_its_token_follows_the_record() -> None:
    log: list[str] = []
    command, transport, _, _ = use_case([completed(), completed()], log=log)
    early = transport.open("login1", "/opt/ds/bin/dunscaith _forwarded -", False, False)
    result = command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False, early)
    assert log[:3] == ["open", "record", "send"] and len(transport.opened) == 1
    assert decode_token(early.token(), "0.1.0").request_id == RID and result.verdict.kind is Kind.COMPLETED


def test_a_session_started_sooner_is_ended_unsent_when_the_record_cannot_be_made() -> None:
    from dunscaith.ports.forwarding import SentRequestsUnusable

    class Refusing(MemorySent):
        def record(self, sent: SentRequest) -> None:
            raise SentRequestsUnusable("forwarded requests cannot be recorded: test")

    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    transport = ScriptedTransport([completed()], clock)
    command = ForwardCommand(transport, Refusing(), MemoryStreams(), clock, lambda: RID, "0.1.0", "login2")
    early = transport.open("login1", "/opt/ds/bin/dunscaith _forwarded -", False, False)
    with pytest.raises(SentRequestsUnusable):
        command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False, early)
    assert early.aborted and early.sent == b""  # the host saw the session end with no request: nothing ran


def test_the_token_carries_the_arguments_and_the_command_line_nothing_else() -> None:
    command, transport, _, _ = use_case([completed()])
    command("login1", "/opt/ds/bin/dunscaith", ["hold", "j; rm -rf ~"], False)
    binary, entry, dash = transport.opened[0][1].split(" ")
    assert (binary, entry, dash) == ("/opt/ds/bin/dunscaith", "_forwarded", "-")
    assert decode_token(transport.channels[0].token(), "0.1.0").argv == ("hold", "j; rm -rf ~")


@pytest.mark.parametrize("script", [dropped(), Script([], SessionEvidence(True, True, None, None, "")),
                                    Script([], SessionEvidence(True, False, Failure.CONNECTION, None, ""))])
def test_no_failure_is_ever_retried(script: Script) -> None:
    command, transport, _, _ = use_case([script, completed()])
    result = command("login1", "/opt/ds/bin/dunscaith", ["cancel", "j"], False)
    assert len(transport.opened) == 1 and result.verdict.kind is not Kind.COMPLETED


def test_a_drop_after_hello_may_have_run_and_names_the_recovery() -> None:
    command, _, sent, _ = use_case([dropped()])
    result = command("login1", "/opt/ds/bin/dunscaith", ["cancel", "j"], False)
    assert result.verdict.kind is Kind.MAY_HAVE_RUN and result.verdict.exit_code == 6
    assert result.message is not None and f"dunscaith forwarded {RID}" in result.message
    assert sent.received[RID].verdict == "may have run"


@pytest.mark.parametrize("terminal", [False, True])
def test_a_prompt_only_after_an_authentication_failure_and_only_at_a_terminal(terminal: bool) -> None:
    command, transport, _, _ = use_case([auth_failed(), completed()], MemoryStreams(terminal=terminal))
    result = command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False)
    assert [prompt for *_, prompt in transport.opened] == ([False, True] if terminal else [False])
    if terminal:  # the second session is the same request: it proved nothing ran the first time
        assert transport.opened[0][1] == transport.opened[1][1]
        assert transport.channels[0].token() == transport.channels[1].token()
        assert result.verdict.kind is Kind.COMPLETED
    else:
        assert result.verdict.reason is Reason.AUTH


@pytest.mark.parametrize("failure", [f for f in Failure if f is not Failure.AUTH])
def test_no_prompt_after_any_other_failure_even_at_a_terminal(failure: Failure) -> None:
    script = Script([], SessionEvidence(True, False, failure, None, ""))
    command, transport, _, _ = use_case([script, completed()], MemoryStreams(terminal=True))
    command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False)
    assert len(transport.opened) == 1


def test_heartbeats_go_out_and_a_silent_host_may_have_run() -> None:
    silent = Script(frames(HELLO), SessionEvidence(True, True, None, None, ""), end_after=False)
    command, transport, _, _ = use_case([silent], HeldStdin())
    result = command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False)
    assert result.verdict.kind is Kind.MAY_HAVE_RUN and result.verdict.reason is Reason.SILENT
    channel = transport.channels[0]
    assert channel.aborted
    beats = [f for f in FrameReader(RID).feed(bytes(channel.sent)) if f.kind is FrameKind.BEAT]
    assert len(beats) >= 3


def test_the_user_s_stdin_goes_in_frames_and_its_end_is_a_frame_not_the_end_of_input() -> None:
    command, transport, _, _ = use_case([completed()], MemoryStreams(stdin=b"data"))
    command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False)
    kinds = [(f.kind, f.payload) for f in FrameReader(RID).feed(bytes(transport.channels[0].sent))]
    assert (FrameKind.IN, b"data") in kinds and (FrameKind.IN_END, b"") in kinds


def test_cancellation_closes_the_held_input_so_the_host_drains_and_its_exit_still_arrives() -> None:
    class Cancelled:
        def pending(self) -> str | None:
            return "SIGINT"

        def wait(self, seconds: float) -> str | None:
            return "SIGINT"

    command, transport, _, _ = use_case([completed()], HeldStdin(), cancellation=Cancelled())
    result = command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False)
    assert transport.channels[0].input_closed and result.verdict.kind is Kind.COMPLETED


def test_a_terminal_session_sends_no_frames() -> None:
    command, transport, _, _ = use_case([completed()])
    command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], True)
    assert transport.opened[0][2] is True and transport.channels[0].sent == b""


def test_the_openssh_client_is_never_asked_to_relax_host_keys_and_prompts_only_when_told(tmp_path: object) -> None:
    from pathlib import Path

    ssh = OpenSshTransport()
    quiet = ssh.argv("login1", "cmd", False, False, Path("/x/log"))
    asking = ssh.argv("login1", "cmd", True, True, Path("/x/log"))
    assert "BatchMode=yes" in quiet and "-T" in quiet and "-tt" not in quiet
    assert "BatchMode=no" in asking and "-tt" in asking
    for argv in (quiet, asking):
        assert not any("StrictHostKeyChecking" in a or "UserKnownHostsFile" in a for a in argv)
        assert argv[-2:] == ["login1", "cmd"] and "-E" in argv and "LogLevel=DEBUG1" in argv


@pytest.mark.parametrize("host", ["-oProxyCommand=x", "a b", "", "host;id"])
def test_a_host_name_ssh_could_read_as_an_option_is_refused(host: str) -> None:
    from pathlib import Path

    from dunscaith.ports.transport import TransportRefused

    with pytest.raises(TransportRefused):
        OpenSshTransport().argv(host, "cmd", False, False, Path("/x"))


def test_the_next_command_to_the_host_first_learns_what_became_of_one_that_may_have_run() -> None:
    from dunscaith.domain.model.forwarding.recovery import HostReport, HostState, report_payload

    first, query, second = "a" * 32, "b" * 32, "c" * 32
    ids = iter([first, query, second, "d" * 32])

    def session(rid: str, *extra: bytes, code: int = 0, ended: bool = True) -> Script:
        hello = encode_json(rid, FrameKind.HELLO, hello_payload(Hello(1, "0.1.0", "login1")))
        final = [encode_json(rid, FrameKind.EXIT, exit_payload(ExitStatus(code, 0, DIGEST)))] if ended else []
        return Script([hello, *extra, *final], SessionEvidence(True, True, None, None, "dropped"))

    answer = encode_json(query, FrameKind.RESULT, report_payload(HostReport(first, HostState.ENDED, 0, 0, DIGEST)))
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    transport = ScriptedTransport([session(first, ended=False), session(query, answer), session(second)], clock)
    sent = MemorySent()
    streams = MemoryStreams()
    command = ForwardCommand(transport, sent, streams, clock, lambda: next(ids), "0.1.0", "login2",
                             heartbeat_seconds=1.0)
    assert command("login1", "/opt/ds/bin/dunscaith", ["cancel", "j"], False).verdict.kind is Kind.MAY_HAVE_RUN
    assert command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False).verdict.kind is Kind.COMPLETED
    told = f"earlier request {first} (cancel j) on login1: it ran and ended with exit status 0"
    assert told in streams.stderr.decode()
    assert len(transport.opened) == 3 and first in sent.settled  # told once: the next command asks nothing
    assert sent.unsettled("login1") == []


def test_a_session_started_sooner_is_ended_unsent_while_earlier_requests_are_asked_about_first() -> None:
    from dunscaith.domain.model.forwarding.recovery import HostReport, HostState, report_payload

    first, query, second = "a" * 32, "b" * 32, "c" * 32
    ids = iter([first, query, second])

    def session(rid: str, *extra: bytes, ended: bool = True) -> Script:
        hello = encode_json(rid, FrameKind.HELLO, hello_payload(Hello(1, "0.1.0", "login1")))
        final = [encode_json(rid, FrameKind.EXIT, exit_payload(ExitStatus(0, 0, DIGEST)))] if ended else []
        return Script([hello, *extra, *final], SessionEvidence(True, True, None, None, "dropped"))

    answer = encode_json(query, FrameKind.RESULT, report_payload(HostReport(first, HostState.ENDED, 0, 0, DIGEST)))
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    unused = Script([], SessionEvidence(True, True, None, None, ""))
    transport = ScriptedTransport([session(first, ended=False), unused, session(query, answer), session(second)],
                                  clock)
    sent = MemorySent()
    command = ForwardCommand(transport, sent, MemoryStreams(), clock, lambda: next(ids), "0.1.0", "login2",
                             heartbeat_seconds=1.0)
    assert command("login1", "/opt/ds/bin/dunscaith", ["cancel", "j"], False).verdict.kind is Kind.MAY_HAVE_RUN
    early = transport.open("login1", "/opt/ds/bin/dunscaith _forwarded -", False, False)
    result = command("login1", "/opt/ds/bin/dunscaith", ["status", "j"], False, early)
    assert early.aborted and early.sent == b""  # a host waiting for its token while others are asked: ended
    assert decode_token(transport.channels[2].token(), "0.1.0").argv == (first,)  # the question, then the command
    assert decode_token(transport.channels[3].token(), "0.1.0").request_id == second
    assert result.verdict.kind is Kind.COMPLETED and first in sent.settled
