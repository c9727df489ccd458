"""Forward one dunscaith command to the owning host, and classify how it went. Never retried by itself.

The request id is chosen here and recorded before the first byte goes out; it names the command's
instance on the host, so "may have run" can always be answered later (recover.py), and a request that
arrives twice is refused there. The one second session is the prompt after an authentication failure
at a terminal: the first session proved nothing ran, and it carries the same request id.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dunscaith.domain.model.forwarding.frames import (
    SILENCE_BEATS,
    ExitStatus,
    Frame,
    FrameKind,
    FrameReader,
    encode_data,
    encode_frame,
    read_exit,
    read_hello,
)
from dunscaith.domain.model.forwarding.recovery import (
    RESOLVED_KEPT,
    HostReport,
    HostState,
    Received,
    SentRequest,
    describe,
    read_report,
)
from dunscaith.domain.model.forwarding.request import (
    TOKEN_ON_STDIN,
    ForwardRequest,
    Kind,
    encode_token,
    remote_command,
    token_line,
    version_warning,
)
from dunscaith.domain.model.forwarding.verdict import CallerEnd, Verdict, classify, may_prompt, message
from dunscaith.domain.model.stdout_digest import finish, new_digest
from dunscaith.domain.model.strict_json import DecodeError
from dunscaith.ports.clock import Clock
from dunscaith.ports.forwarding import CallerStreams, SentRequests
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.transport import Channel, Transport

if TYPE_CHECKING:
    from blake3 import blake3

TICK_SECONDS = 0.1  # how often the user's stdin is looked at
MAX_EARLIER = 3  # earlier requests asked about before a new one


@dataclass(frozen=True, slots=True)
class Forwarded:
    request_id: str
    host: str
    verdict: Verdict
    message: str | None  # the line about the hop itself (None when the command completed)
    warnings: tuple[str, ...] = ()
    report: HostReport | None = None  # the answer of an outcome query
    stdout_bytes: int = 0  # of the command's stdout, passed on to the caller's


@dataclass
class _Session:
    request_id: str
    streams: CallerStreams | None
    hello: bool = False
    final: ExitStatus | None = None
    report: HostReport | None = None
    warnings: list[str] = field(default_factory=list)
    stdout_bytes: int = 0
    digest: blake3 = field(default_factory=new_digest)


class ForwardCommand:
    def __init__(self, transport: Transport, sent: SentRequests, streams: CallerStreams, clock: Clock,
                 new_id: Callable[[], str], version: str, caller_host: str,
                 cancellation: Interrupts | None = None, heartbeat_seconds: float = 5.0,
                 drain_seconds: float = 30.0, program: str = "dunscaith") -> None:
        self.transport = transport
        self.sent = sent
        self.streams = streams
        self.clock = clock
        self.new_id = new_id
        self.version = version
        self.caller_host = caller_host
        self.cancellation = cancellation
        self.heartbeat = heartbeat_seconds
        self.drain = drain_seconds
        self.program = program

    def __call__(self, host: str, binary: str, argv: Sequence[str], terminal: bool,
                 opened: Channel | None = None) -> Forwarded:
        """``opened``: a session of ``remote_command(binary)`` (the token on stdin) the caller started even
        sooner, on which nothing was sent yet; this call owns it from here (it is ended if unused).

        Without a terminal the session starts before the request is recorded and its token (the request,
        the first byte of it) is written only after: ssh connects and logs in meanwhile. A terminal
        session carries the token on its command line, so it starts only once the request is recorded."""
        try:
            self.sent.expire(self.clock.now(), RESOLVED_KEPT)
            earlier = self.sent.unsettled(host)
            if earlier and opened is not None:  # asked first, each in a session of its own: this one would wait
                self._discard(opened)
                opened = None
            self.settle_earlier(host, earlier)
            rid = self.new_id()
            request = ForwardRequest(rid, Kind.RUN, tuple(argv), self.version, self.caller_host, self.heartbeat,
                                     terminal)
            token = encode_token(request)
            command = remote_command(binary, token if terminal else TOKEN_ON_STDIN)  # an unsafe path: refused
            if terminal and opened is not None:
                self._discard(opened)
                opened = None
            if not terminal and opened is None:
                opened = self.transport.open(host, command, False, False)
            self.sent.record(SentRequest(rid, host, binary, tuple(argv), self.clock.now()))
        except BaseException:
            if opened is not None:
                self._discard(opened)  # nothing was sent on it: the host saw no request
            raise
        session = _Session(rid, self.streams)
        verdict = self._session(host, command, session, terminal, prompt=False, token=token, channel=opened)
        if may_prompt(verdict, self.streams.at_terminal()):
            session = _Session(rid, self.streams)
            verdict = self._session(host, command, session, terminal, prompt=True, token=token)
        self.sent.ended(Received(rid, verdict.kind.value, verdict.reason.name, session.stdout_bytes,
                                 finish(session.digest), self.clock.now()))
        return Forwarded(rid, host, verdict, message(verdict, host, rid, self.program), tuple(session.warnings),
                         stdout_bytes=session.stdout_bytes)

    @staticmethod
    def _discard(channel: Channel) -> None:
        channel.abort()
        channel.finish(1.0)

    def settle_earlier(self, host: str,
                       earlier: list[tuple[SentRequest, Received | None]] | None = None) -> None:
        """Before a new command goes to ``host``: learn what became of earlier ones that may have run there.

        Each answer is told once (on stderr) and recorded; a request still running, or a host that does
        not answer, is asked again by the next command. At most a few are asked, so a host that is down
        is not hammered. Nothing is ever run again.
        """
        for sent, received in (self.sent.unsettled(host) if earlier is None else earlier)[:MAX_EARLIER]:
            answer = self.query(sent)
            report = answer.report
            if report is None or report.state in (HostState.RUNNING, HostState.STARTING):
                continue
            if report.state is HostState.NOT_ARRIVED and received is None:
                continue  # its session may still be under way from another terminal
            lines = describe(sent, report, received)
            for line in lines:
                self.streams.err(f"{self.program}: earlier {line}\n".encode())
            self.sent.settle(sent.request_id, " ".join(lines))

    def query(self, sent: SentRequest) -> Forwarded:
        """Ask the host what became of ``sent`` (reads only: nothing is run)."""
        rid = self.new_id()
        request = ForwardRequest(rid, Kind.OUTCOME, (sent.request_id,), self.version, self.caller_host,
                                 self.heartbeat, False)
        command = remote_command(sent.binary, TOKEN_ON_STDIN)
        session = _Session(rid, None)
        verdict = self._session(sent.host, command, session, terminal=False, prompt=False,
                                token=encode_token(request))
        return Forwarded(rid, sent.host, verdict, message(verdict, sent.host, rid, self.program),
                         tuple(session.warnings), session.report)

    # ---- one session ---------------------------------------------------------------------------------

    def _session(self, host: str, command: str, session: _Session, terminal: bool, prompt: bool, token: str,
                 channel: Channel | None = None) -> Verdict:
        if channel is None:
            channel = self.transport.open(host, command, terminal, prompt)
        if not terminal:
            channel.send(token_line(token))  # a session that ended already: its evidence says so
        reader = FrameReader(session.request_id)
        caller_end = self._pump(channel, reader, session, host, terminal)
        reader.finish()
        channel.close_input()
        evidence = channel.finish(10.0)
        return classify(evidence, session.hello, session.final, caller_end)

    def _pump(self, channel: Channel, reader: FrameReader, session: _Session, host: str,
              terminal: bool) -> CallerEnd | None:
        """The session's frames taken as they come, the user's stdin fed in and a beat sent each heartbeat,
        until the host's final frame or end of output (None), a cancellation past the drain, or a host that
        said hello and then fell silent (the caller's end, the channel aborted)."""
        now = self.clock.monotonic
        feeding = not terminal and session.streams is not None  # the user's stdin, copied in while it lasts
        last_frame = now()
        next_beat = now() + self.heartbeat
        cancelled_at: float | None = None
        while True:
            if cancelled_at is None and self.cancellation is not None and self.cancellation.pending() is not None:
                cancelled_at = now()
                channel.close_input()  # the host reads end of input as SIGHUP, and its command drains
            if cancelled_at is not None and now() - cancelled_at > self.drain:
                channel.abort()
                return CallerEnd.CANCELLED
            chunk = channel.receive(min(TICK_SECONDS, max(0.0, next_beat - now())))
            if chunk == b"":
                return None
            if chunk and self._take_all(reader.feed(chunk), session, host):
                last_frame = now()
            if session.final is not None:
                return None
            if session.hello and now() - last_frame > SILENCE_BEATS * self.heartbeat:
                channel.abort()
                return CallerEnd.SILENT
            if cancelled_at is not None or terminal:
                continue
            if feeding:
                feeding = self._feed(channel, session)
            if now() >= next_beat:
                next_beat = now() + self.heartbeat
                channel.send(encode_frame(session.request_id, FrameKind.BEAT))

    def _take_all(self, frames: Sequence[Frame], session: _Session, host: str) -> bool:
        """Each frame taken in order; whether there was any (the host is not silent)."""
        for frame in frames:
            self._take(frame, session, host)
        return bool(frames)

    @staticmethod
    def _feed(channel: Channel, session: _Session) -> bool:
        """What the user's stdin has now, sent on; False once it ended (the command's stdin ends, the
        session's stays open)."""
        if session.streams is None:
            return False
        data = session.streams.read_input()
        if data == b"":
            channel.send(encode_frame(session.request_id, FrameKind.IN_END))
            return False
        if data:
            channel.send(b"".join(encode_data(session.request_id, FrameKind.IN, data)))
        return True

    def _take(self, frame: Frame, session: _Session, host: str) -> None:
        try:
            match frame.kind:
                case FrameKind.HELLO:
                    hello = read_hello(frame)
                    session.hello = True
                    warning = version_warning(self.version, hello.version, host)
                    if warning is not None:
                        session.warnings.append(warning)
                        if session.streams is not None:
                            session.streams.err(f"{self.program}: warning: {warning}\n".encode())
                case FrameKind.OUT:
                    session.stdout_bytes += len(frame.payload)
                    session.digest.update(frame.payload)
                    if session.streams is not None:
                        session.streams.out(frame.payload)
                case FrameKind.ERR:
                    if session.streams is not None:
                        session.streams.err(frame.payload)
                case FrameKind.RESULT:
                    session.report = read_report(frame.json())
                case FrameKind.EXIT:
                    session.final = read_exit(frame)
                case _:
                    pass  # beats, and kinds only the host reads
        except DecodeError:
            pass  # a damaged frame is not the host's answer: without a final one, the verdict says so
