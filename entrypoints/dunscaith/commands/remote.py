"""``dunscaith remote``: own a process, forward its stdout, record how it ended (docs/remote.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from dunscaith.entrypoints.cli_support import BadInput, finish_help, new_app
from dunscaith.entrypoints.dunscaith.remote_run import RemoteRoot, RunArgs, own
from dunscaith.entrypoints.path_args import path_arg

# The wrapper, the control files and their use cases are imported by the process owner's root when a
# remote command asks it for them: the app imports this module for every ``dunscaith`` command, and
# ``status JOB`` would pay for modules it never uses.
if TYPE_CHECKING:
    from dunscaith.domain.services.remote.instances import ReadStatus, TerminateInstance

app: typer.Typer = new_app("Own a process: start it in its own group and record what it did.")


def _root(ctx: typer.Context) -> RemoteRoot:
    """The process owner's root (remote_run.py): the one a test passed as ``obj``, else a new one."""
    return ctx.obj if isinstance(ctx.obj, RemoteRoot) else RemoteRoot()


@app.command("run", context_settings={"allow_interspersed_args": False})
def run_command(
    ctx: typer.Context,
    command: list[str] = typer.Argument(..., metavar="-- PROGRAM [ARGS]...", help="The worker and its arguments."),
    instance_dir: Path | None = typer.Option(None, "--instance-dir", help="Instance directory (new or empty).",
                                              parser=path_arg),
    env: list[str] = typer.Option([], "--env", metavar="K=V",
                                  help="The worker's environment, exactly (visible in ps: secrets go in --env-file)."),
    env_file: Path | None = typer.Option(None, "--env-file", metavar="FILE",
                                         help="More of it from a 0600 file: JSON, or NUL-ended K=V (env -0).",
                                         parser=path_arg),
    cwd: Path | None = typer.Option(None, "--cwd", help="The worker's working directory.", parser=path_arg),
) -> None:
    """Run PROGRAM as an owned worker; exit with its exit code (128+n for signal n, 127 if it never started)."""
    # `dunscaith remote run` normally never gets here: cli_support sends it to remote_run first. This
    # is the same run, reached with --help handled, from the typer app (tests, `python -m`-style starts).
    args = RunArgs(list(command), instance_dir, list(env), env_file, cwd)
    raise typer.Exit(own(args, _root(ctx).wrapper))


@app.command("exec", hidden=True)
def exec_command() -> None:
    """Internal: the wrapper's child. Never call it yourself."""
    RemoteRoot.exec_child()


@app.command("terminate")
def terminate_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., metavar="DIR", parser=path_arg),
    grace: float = typer.Option(10.0, "--grace", min=0.0, help="Seconds between TERM and KILL (at most 30 days)."),
    wait: float = typer.Option(30.0, "--wait", min=0.0, help="Seconds to wait for the answer (at most 30 days)."),
    nonce: str | None = typer.Option(None, "--nonce", help="The instance you mean (default: the one in DIR)."),
) -> None:
    """Ask the wrapper of DIR to end its worker; print confirmed, refused, unanswered or unrequested."""
    from dunscaith.domain.model.remote.control import ControlError

    root = _root(ctx)
    use_case: TerminateInstance = root.terminate(directory)
    from dunscaith.domain.model.remote.errors import BadTerminateArguments, RequestNotWritten
    from dunscaith.domain.model.remote.state import Answer

    try:
        answer = use_case(grace, wait, nonce)
    except BadTerminateArguments as exc:
        raise BadInput(str(exc)) from None
    except (root.not_an_instance(), ControlError) as exc:
        raise BadInput(_located(directory, exc)) from None
    except RequestNotWritten as exc:  # its own request is not in place: unrequested, and why
        print(f"dunscaith: {exc}", file=sys.stderr)
        answer = Answer.UNREQUESTED
    print(answer.value)
    raise typer.Exit(answer.exit_code)


@app.command("status")
def status_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., metavar="DIR", parser=path_arg),
    as_json: bool = typer.Option(False, "--json", help="One JSON object (schema dunscaith.remote.status/1)."),
) -> None:
    """Report the state of an instance directory."""
    from dunscaith.domain.model.remote.control import ControlError

    root = _root(ctx)
    use_case: ReadStatus = root.read_status(directory)
    try:
        status = use_case()
    except (root.not_an_instance(), ControlError) as exc:
        raise BadInput(_located(directory, exc)) from None
    if as_json:
        print(json.dumps(status, sort_keys=True))
    else:
        for line in _text_lines(status):
            print(line)


def _located(directory: Path, exc: Exception) -> str:
    return str(exc) if isinstance(exc, RemoteRoot.not_an_instance()) else f"{directory}/{exc}"


def _text_lines(status: dict[str, Any]) -> list[str]:
    from dunscaith.domain.model.remote.state import disk_full

    lines = [f"state: {status['state']}", f"live: {'yes' if status['live'] else 'no'}"]
    if status["instance"]:
        inst = status["instance"]
        lines.append(f"instance: {inst['nonce']} on {inst['host']} (wrapper {inst['wrapper_pid']}, "
                     f"worker {inst['worker_pid']})")
    if status["failure"]:
        lines.append(f"failure: {status['failure']['stage']}: {status['failure']['message']}")
    if status["request"]:
        lines.append(f"request: terminate, grace {status['request']['grace_seconds']}s")
    for refusal in status["refused"]:
        lines.append(f"refused {refusal['number']}: {refusal['reason']}")
    for name in ("terminated", "killed"):
        if status[name]:
            lines.append(f"{name}: {status[name]['signal']} at {status[name]['at']}")
    if status["outcome"]:
        out = status["outcome"]
        ended = f"exit {out['exit_code']}" if out["exit_code"] is not None else f"signal {out['signal']}"
        lines.append(f"outcome: {ended}, stdout {out['stdout_bytes']} bytes, digest {out['stdout_digest']}")
    if status.get("blocked"):
        note = status["blocked"]
        full = "disk full: " if disk_full(note["errno"]) else ""
        lines.append(f"blocked: {full}{note['file']} not written yet ({note['reason']}, since {note['since']})")
    return lines


finish_help(app, {
    "run": ["dunscaith remote run --env PATH=/usr/bin:/bin -- ./worker --steps 10",
            "dunscaith remote run --instance-dir /var/tmp/me/w1 --env-file vars.env -- python job.py"],
    "terminate": ["dunscaith remote terminate /var/tmp/me/w1", "dunscaith remote terminate --grace 30 /var/tmp/me/w1"],
    "status": ["dunscaith remote status /var/tmp/me/w1", "dunscaith remote status --json /var/tmp/me/w1"],
}, "Exit codes: run exits as its worker did (128+n by signal n), 127 when it could not start, 2 bad input "
   "or no room on disk to record the launch (nothing ran), "
   "3 internal error; terminate and status: see docs/remote.md.")
