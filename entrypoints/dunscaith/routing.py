"""Where a job command runs, decided before typer, pydantic or the job container is imported.

A command for a job whose pointer names another host re-runs itself there over SSH (seed 000); on the
caller it then only waits for frames. Paying the whole CLI's start-up (~0.2 s) just to learn that is
what made a forwarded command slow, so the front door (``front_door.py``) asks here first. This module decides
only the plain case and hands everything else to the typer app, unchanged:

- the command is one of ``ROUTED``, followed by exactly one word that is not an option (the job) and
  only the flags that command has (``tests/unit/forwarding/test_routing.py`` checks this table against
  the typer app, so the two cannot disagree); anything else (``--help``, ``--``, an unknown option, a
  value) goes to typer;
- this process was not itself forwarded (the typer path refuses to forward again);
- the job's pointer reads and names another host (no pointer, a damaged one, or this host: typer);
- the records are a host's own (what the store chosen by ``records.backend`` declares, in
  ``kinds.py``): a shared store may hold the record here, which only the store can say.

The settings come from ``settings_cache.plain_settings``: the one ``load_settings`` validates them
(its refusal is the same one line), and its answer is remembered for the same inputs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from dunscaith.entrypoints.cli_support import BadInput, wants_json

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3.5 ms) on every local job's start
if TYPE_CHECKING:
    from dunscaith.domain.services.forwarding.forward import Forwarded
    from dunscaith.entrypoints.dunscaith.root.settings_cache import HopSettings

PROG = "dunscaith"
# The words the command line was parsed from (app.main sets them): a forwarded command sends exactly these.
ARGV: list[str] = []
_JSON = frozenset({"--json"})
# command -> the flags it takes besides its JOB argument (none of them takes a value)
ROUTED: dict[str, frozenset[str]] = {
    "status": frozenset({"--json", "--watch"}),
    "events": _JSON,
    "watch": frozenset(),
    **{action: _JSON for action in ("hold", "release", "cancel", "give-up", "abandon", "requeue", "resubmit")},
    "reconcile": _JSON,
    "supervise": frozenset({"--follow", "-f", "--json", "--job-exit-code", "--dunscaith-exit-code", "--all"}),
}
# command -> its options that choose a sweep's elements (docs/sweeps.md): a line with one of them is never
# routed lean (``routed_job`` sees an option it does not know) and goes to typer, which resolves the sweep
TYPER_ONLY: dict[str, frozenset[str]] = {
    "status": frozenset({"--state"}),
    **{action: frozenset({"--state"}) for action in ("hold", "release", "cancel", "give-up", "abandon", "requeue")},
    "resubmit": frozenset({"--state", "--failed", "--cpus", "--memory", "--time", "--gpus", "--queue", "--account"}),
}


def routed_job(argv: Sequence[str]) -> str | None:
    """The job of a plain routed command line (``argv`` without the program), else None."""
    if not argv or argv[0] not in ROUTED:
        return None
    flags = ROUTED[argv[0]]
    jobs = []
    for word in argv[1:]:
        if word in flags:
            continue
        if word.startswith("-"):
            return None  # "--", --help, an unknown option: typer says what it says
        jobs.append(word)
    return jobs[0] if len(jobs) == 1 else None


def refuse_if_forwarded(job: str, host: str) -> None:
    """A forwarded command never forwards again (an alias pointing back at a forwarder cannot recurse)."""
    from dunscaith.entrypoints.dunscaith.forwarding_root import forwarded_env

    request = forwarded_env()
    if request:
        raise BadInput(f"the record of job {job} is on host {host}, and this command was itself forwarded here "
                       f"(request {request}): a forwarded command never forwards again")


def forward(section: HopSettings, host: str, binary: str, argv: Sequence[str], job: str) -> int:
    """Run ``argv`` on ``host`` (the job's owning host); the exit status it had there (or the hop's)."""
    from dunscaith.domain.model.forwarding.request import UnsafeBinaryPath, remote_command
    from dunscaith.entrypoints.dunscaith.forwarding_root import forward_command, make_transport
    from dunscaith.ports.transport import TransportRefused

    def refusals() -> tuple[type[Exception], ...]:
        from dunscaith.ports.forwarding import SentRequestsUnusable  # imported once ssh runs, or when refused

        return UnsafeBinaryPath, TransportRefused, SentRequestsUnusable

    refuse_if_forwarded(job, host)
    try:
        transport = make_transport(section)
        # At a terminal, the remote gets one and this terminal is handed to it (ssh -tt, or paramiko's
        # get_pty), so Ctrl-C reaches the remote as SIGINT.
        terminal = os.isatty(0) and transport.name in ("openssh", "paramiko")
        # Without one, ssh starts here, before the use case is even imported: it connects and logs in
        # while the request is recorded; its token (the request) goes only once it is (ForwardCommand).
        opened = None if terminal else transport.open(host, remote_command(binary), False, False)
        try:
            use_case = forward_command(section, transport, terminal)
        except BaseException:
            if opened is not None:
                opened.abort()  # nothing was sent on it
                opened.finish(1.0)
            raise
        result = use_case(host, binary, argv, terminal, opened)
    except Exception as exc:
        if isinstance(exc, refusals()):
            raise BadInput(f"{exc}; nothing ran on {host}") from None
        raise
    report(result, wants_json(list(argv)))
    return result.verdict.exit_code


def report(result: Forwarded, as_json: bool = False) -> None:
    """The line about the hop itself on stderr; under --json also the error object on stdout, unless the
    command's own output had begun there (one document on stdout: the line and the exit code say the rest)."""
    if result.message is None:
        return
    print(f"{PROG}: {result.message}", file=sys.stderr, flush=True)
    if as_json and result.stdout_bytes == 0:
        import json

        from dunscaith.domain.model.forwarding.verdict import Kind

        # docs/json.md: the error object's code for a command that has no exit status of its own
        code = {Kind.NEVER_RAN: "never-ran", Kind.MAY_HAVE_RUN: "may-have-run"}[result.verdict.kind]
        error = {"code": code, "message": result.message, "exit_code": result.verdict.exit_code}
        try:
            print(json.dumps({"error": error, "host": result.host, "request": result.request_id}), flush=True)
        except OSError:  # a reader that went away: the exit code still tells
            pass


def route(argv: Sequence[str]) -> int | None:
    """Forward ``argv`` and return its exit status, or None: the typer app runs the command (here or not)."""
    from dunscaith.entrypoints.dunscaith.forwarding_root import forwarded_env, owning_host

    job = routed_job(argv)
    if job is None or forwarded_env():
        return None
    owner = owning_host(job)
    if owner is None:
        return None
    from dunscaith.entrypoints.dunscaith.root.kinds import records_shared
    from dunscaith.entrypoints.dunscaith.root.settings_cache import plain_settings

    settings = plain_settings()  # remembered, or validated now by load_settings (BadInput when wrong)
    if records_shared(settings.records.backend):
        return None  # a store every login node shares may hold the record here: only the store can say
    host, binary = owner
    return forward(settings.forwarding, host, binary, argv, job)
