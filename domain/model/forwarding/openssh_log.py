"""The OpenSSH client's own log and stderr, read into SessionEvidence (a table, one row per line kind).

The client runs with ``-E LOGFILE -o LogLevel=DEBUG1``. Some lines go to that file, some (such as
"Connection to X closed by remote host.") only to stderr, so both are read. Measured on OpenSSH 9.2
(../shared/notes/ssh-hosts.md); a DEBUG1 log begins with the configuration files it read (and, with
``-v``, the client's version), and a log without those is not an account of the session.
"""

from __future__ import annotations

import re
from enum import Enum

from dunscaith.domain.model.forwarding.evidence import Failure, SessionEvidence


class Line(Enum):
    BANNER = "the client's version line: the log is an account of the session"
    AUTHENTICATED = "authentication succeeded: the command may be sent from here on"
    SHARED = "an existing shared connection (ControlMaster) was used: no authentication of its own"
    COMMAND_SENT = "the command was sent"
    AUTH_FAILED = "authentication failed"
    HOST_KEY_CHANGED = "the host key changed"
    HOST_KEY_UNKNOWN = "the host key is not known"
    HOST_KEY_FAILED = "host key verification failed"
    CONNECT_FAILED = "no connection to the host"
    DROPPED = "the connection was dropped"
    EXIT_STATUS = "the host reported the session's exit status"


# (pattern, meaning), searched in every line of the log and of stderr. Order does not matter: a
# session's lines are combined by openssh_evidence, never by the first match.
TABLE: tuple[tuple[re.Pattern[str], Line], ...] = (
    (re.compile(r"^(debug1: )?OpenSSH_\S+"), Line.BANNER),
    (re.compile(r"^debug1: Reading configuration data "), Line.BANNER),
    (re.compile(r"Authenticated to \S+"), Line.AUTHENTICATED),
    (re.compile(r"Authentication succeeded \("), Line.AUTHENTICATED),
    (re.compile(r"auto-mux: Trying existing master"), Line.SHARED),
    (re.compile(r"mux_client_request_session: master session id"), Line.SHARED),
    (re.compile(r"Sending command: "), Line.COMMAND_SENT),
    (re.compile(r"Permission denied \("), Line.AUTH_FAILED),
    (re.compile(r"Too many authentication failures"), Line.AUTH_FAILED),
    (re.compile(r"No more authentication methods to try"), Line.AUTH_FAILED),
    (re.compile(r"REMOTE HOST IDENTIFICATION HAS CHANGED"), Line.HOST_KEY_CHANGED),
    (re.compile(r"Host key for \S+ has changed"), Line.HOST_KEY_CHANGED),
    (re.compile(r"No \S+ host key is known for"), Line.HOST_KEY_UNKNOWN),
    (re.compile(r"Host key verification failed\."), Line.HOST_KEY_FAILED),
    (re.compile(r"ssh: connect to host .*: "), Line.CONNECT_FAILED),
    (re.compile(r"ssh: Could not resolve hostname"), Line.CONNECT_FAILED),
    (re.compile(r"kex_exchange_identification: "), Line.CONNECT_FAILED),
    (re.compile(r"Connection closed by \S+ port \d+$"), Line.CONNECT_FAILED),
    (re.compile(r"Connection (timed out|refused) during banner exchange"), Line.CONNECT_FAILED),
    (re.compile(r"Connection to \S+ closed by remote host\."), Line.DROPPED),
    (re.compile(r"Timeout, server \S+ not responding\."), Line.DROPPED),
    (re.compile(r"client_loop: send disconnect: "), Line.DROPPED),
    (re.compile(r"Broken pipe$"), Line.DROPPED),
    (re.compile(r"Exit status -?\d+$"), Line.EXIT_STATUS),
)

_EXIT = re.compile(r"Exit status (-?\d+)$")

# When several pre-authentication failures are logged, the most specific one is reported.
_FAILURES = (
    (Line.HOST_KEY_CHANGED, Failure.HOST_KEY_CHANGED),
    (Line.HOST_KEY_UNKNOWN, Failure.HOST_KEY_UNKNOWN),
    (Line.HOST_KEY_FAILED, Failure.HOST_KEY),
    (Line.AUTH_FAILED, Failure.AUTH),
    (Line.CONNECT_FAILED, Failure.CONNECTION),
)


def classify_line(line: str) -> set[Line]:
    return {meaning for pattern, meaning in TABLE if pattern.search(line)}


def openssh_evidence(log: str, stderr: str) -> SessionEvidence:
    seen: dict[Line, str] = {}
    host_exit: int | None = None
    for line in (log + "\n" + stderr).splitlines():
        line = line.rstrip("\r")
        for meaning in classify_line(line):
            seen.setdefault(meaning, line.removeprefix("debug1: "))
            if meaning is Line.EXIT_STATUS:
                host_exit = int(_EXIT.search(line).group(1))  # type: ignore[union-attr]
    if Line.BANNER not in seen:
        return SessionEvidence.unaccounted(_last_line(stderr) or "ssh left no log")
    reached = bool({Line.AUTHENTICATED, Line.SHARED, Line.COMMAND_SENT} & seen.keys())
    failure = next((f for line, f in _FAILURES if line in seen), None)
    if host_exit is not None and host_exit < 0:  # "Exit status -1": the session ended without one
        host_exit = None
    if reached:
        detail = seen.get(Line.DROPPED) or _last_line(stderr) or seen.get(Line.EXIT_STATUS, "")
        return SessionEvidence(True, True, None, host_exit, detail)
    if failure is not None:
        line = next(seen[line] for line, f in _FAILURES if f is failure)
        return SessionEvidence(True, False, failure, None, line)
    return SessionEvidence(True, False, Failure.CONNECTION, None,
                           _last_line(stderr) or "the connection ended before authentication")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""
