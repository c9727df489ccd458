"""The verdict on a forwarded command: completed, never ran, or may have run. Never retried by itself.

Only what proves the command never ran is reported as such: the client's own account of a session
that failed before authentication (authentication, host key, connection), or a session the host
ended with its own exit status before the forwarded side said hello (it never started: a stream that
ended with the host's exit status was whole). Everything else without a final frame may have run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from dunscaith.domain.model.forwarding.evidence import Failure, SessionEvidence
from dunscaith.domain.model.forwarding.frames import ExitStatus

# Exit codes of a forwarded command that has no exit status of its own (DESIGN §4: forwarded commands
# keep the remote exit code; "may have run" has its own).
NEVER_RAN_EXIT = 2
MAY_HAVE_RUN_EXIT = 6


class Kind(Enum):
    COMPLETED = "completed"
    NEVER_RAN = "never ran"
    MAY_HAVE_RUN = "may have run"


class Reason(Enum):
    EXIT_FRAME = "the host sent the command's exit status"
    AUTH = "authentication failed"
    HOST_KEY_CHANGED = "the host key changed"
    HOST_KEY_UNKNOWN = "the host key is not known"
    HOST_KEY = "the host key was refused"
    CONNECTION = "no connection"
    NOT_STARTED = "the forwarded side did not start on the host"
    DROPPED = "the connection ended after the command was sent"
    STARTED_THEN_LOST = "the forwarded side started, then the stream ended without its exit status"
    SILENT = "the host went silent (no heartbeat)"
    CANCELLED = "cancelled here before the host answered"
    UNACCOUNTED = "the client's own log could not be read"


_BY_FAILURE = {
    Failure.AUTH: Reason.AUTH,
    Failure.HOST_KEY_CHANGED: Reason.HOST_KEY_CHANGED,
    Failure.HOST_KEY_UNKNOWN: Reason.HOST_KEY_UNKNOWN,
    Failure.HOST_KEY: Reason.HOST_KEY,
    Failure.CONNECTION: Reason.CONNECTION,
}


class CallerEnd(Enum):
    """Why the caller stopped reading, when the stream did not simply end."""

    SILENT = "silent"  # no frame for the silence limit after hello
    CANCELLED = "cancelled"  # the local command was cancelled (a signal) and the wait for the drain ran out


@dataclass(frozen=True, slots=True)
class Verdict:
    kind: Kind
    reason: Reason
    exit_code: int
    detail: str = ""
    final: ExitStatus | None = None


def classify(evidence: SessionEvidence, hello_seen: bool, final: ExitStatus | None,
             caller_end: CallerEnd | None = None) -> Verdict:
    if final is not None:
        return Verdict(Kind.COMPLETED, Reason.EXIT_FRAME, final.code, evidence.detail, final)
    may = Kind.MAY_HAVE_RUN
    if caller_end is CallerEnd.SILENT:
        return Verdict(may, Reason.SILENT, MAY_HAVE_RUN_EXIT, evidence.detail)
    if hello_seen:
        return Verdict(may, Reason.STARTED_THEN_LOST, MAY_HAVE_RUN_EXIT, evidence.detail)
    if not evidence.accounted:
        return Verdict(may, Reason.UNACCOUNTED, MAY_HAVE_RUN_EXIT, evidence.detail)
    if evidence.reached:
        if evidence.host_exit is not None:
            return Verdict(Kind.NEVER_RAN, Reason.NOT_STARTED, NEVER_RAN_EXIT, evidence.detail)
        reason = Reason.CANCELLED if caller_end is CallerEnd.CANCELLED else Reason.DROPPED
        return Verdict(may, reason, MAY_HAVE_RUN_EXIT, evidence.detail)
    failure = evidence.failure if evidence.failure is not None else Failure.CONNECTION
    return Verdict(Kind.NEVER_RAN, _BY_FAILURE[failure], NEVER_RAN_EXIT, evidence.detail)


def may_prompt(verdict: Verdict, at_terminal: bool) -> bool:
    """A prompt (for a passphrase, a password, a second factor) only after an authentication failure
    that proved nothing ran, and only when a person is at a terminal to answer it."""
    return at_terminal and verdict.kind is Kind.NEVER_RAN and verdict.reason is Reason.AUTH


def message(verdict: Verdict, host: str, request_id: str, program: str = "dunscaith") -> str | None:
    """The one line the user sees about the hop itself (None when the command completed)."""
    detail = f" ({verdict.detail})" if verdict.detail else ""
    nothing = f"nothing ran on {host}"
    match verdict.reason:
        case Reason.EXIT_FRAME:
            return None
        case Reason.AUTH:
            return (f"could not log in to {host}{detail}; {nothing}. Check that `ssh {host} true` works "
                    "without a prompt (your key, ssh-agent, a certificate that has not expired), then run the "
                    "command again")
        case Reason.HOST_KEY_CHANGED:
            return (f"the host key of {host} has changed and ssh refused it{detail}; {nothing}. dunscaith never "
                    f"relaxes host key checking: confirm the new key with your site, update ~/.ssh/known_hosts "
                    f"(ssh-keygen -R {host}), then run the command again")
        case Reason.HOST_KEY_UNKNOWN | Reason.HOST_KEY:
            return (f"the host key of {host} is not known or was refused{detail}; {nothing}. Connect once with "
                    f"`ssh {host}` and confirm its key, then run the command again")
        case Reason.CONNECTION:
            return f"could not connect to {host}{detail}; {nothing}. Run the command again when it is reachable"
        case Reason.NOT_STARTED:
            return (f"dunscaith did not start on {host}{detail}; {nothing}. Check the dunscaith path in the "
                    f"job's pointer and that the same dunscaith is installed there")
        case _:
            return (f"the connection to {host} was lost after the command was sent ({verdict.reason.value}"
                    f"{'; ' + verdict.detail if verdict.detail else ''}): it MAY HAVE RUN there. dunscaith does "
                    f"not send it again. Find out what happened with: {program} forwarded {request_id}")
