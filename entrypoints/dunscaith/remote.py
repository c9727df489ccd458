"""``dunscaith remote``: own a process, forward its stdout, record how it ended (docs/remote.md)."""

from __future__ import annotations

import json
import os
import pwd
import secrets
import stat
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from entrypoints.cli_support import BadInput, new_app

# The wrapper, the control files and their use cases are imported by the remote commands themselves:
# the app imports this module for every ``dunscaith`` command, and ``status JOB`` would pay ~30 ms
# for modules it never uses.
if TYPE_CHECKING:
    from adapters.process.wrapper import PosixWrapper
    from domain.services.remote.instances import ReadStatus, TerminateInstance

app: typer.Typer = new_app("Own a process: start it in its own group and record what it did.")


def remote_container() -> Any:
    """The container of the ``remote`` commands (clock, instance files, use cases, wrapper).

    Built on first use, not at import: dependency-injector pulls in pydantic-settings (~0.1 s), and
    ``remote run`` is started for every local job, so its start-up time is the wrapper's fixed cost.
    Tests pass their own as ``obj`` (or as ``obj.remote``) to override providers.
    """
    from dependency_injector import containers, providers

    from adapters.clock.system import SystemClock
    from adapters.process.instance_dir import DirectoryInstanceFiles
    from adapters.process.wrapper import PosixWrapper
    from domain.services.remote.instances import ReadStatus, TerminateInstance

    class RemoteContainer(containers.DeclarativeContainer):
        clock = providers.Singleton(SystemClock)
        instance_files = providers.Factory(DirectoryInstanceFiles)
        read_status = providers.Factory(ReadStatus)
        terminate = providers.Factory(TerminateInstance, clock=clock)
        wrapper = providers.Factory(PosixWrapper, clock=clock)

    return RemoteContainer()


def _container(ctx: typer.Context) -> Any:
    obj = ctx.obj
    for candidate in (getattr(obj, "remote", None), obj):
        if candidate is not None and hasattr(candidate, "wrapper") and hasattr(candidate, "terminate"):
            return candidate
    return remote_container()


def _parse_env(pairs: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or "\0" in pair:
            raise BadInput(f"--env wants NAME=VALUE, got {pair.split('=')[0]!r} without '=' or without a name")
        if name in env:
            raise BadInput(f"--env {name} is given twice")
        env[name] = value
    return env


ENV_FILE_MAX_BYTES = 1 << 20  # far above what execve takes; a bigger file is a mistake


def read_env_file(path: Path) -> dict[str, str]:
    """The environment in ``path``: yours, 0600 (nothing for group or others), not a symlink.

    Either a JSON object of strings, or NAME=VALUE entries each ended by a NUL byte (what ``env -0``
    writes). An error names the file and the entry's number or name, never a value.
    """
    where = f"--env-file {path}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BadInput(f"{where}: no such file") from None
    except OSError as exc:
        if os.path.islink(path):
            raise BadInput(f"{where}: is a symbolic link; give the file itself") from None
        raise BadInput(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise BadInput(f"{where}: not a regular file")
        if st.st_uid != os.geteuid():
            raise BadInput(f"{where}: not your own file")
        if st.st_mode & 0o077:
            raise BadInput(f"{where}: mode {stat.S_IMODE(st.st_mode):04o} lets others read or change it; "
                           f"chmod 600 {path}")
        chunks, size = [], 0
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > ENV_FILE_MAX_BYTES:
                raise BadInput(f"{where}: larger than {ENV_FILE_MAX_BYTES} bytes")
    except OSError as exc:
        raise BadInput(f"{where}: cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    return parse_env_file(where, b"".join(chunks))


def parse_env_file(where: str, data: bytes) -> dict[str, str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{where}: not UTF-8 (at byte {exc.start})") from None
    if "\0" not in text and text.lstrip().startswith("{"):
        return _env_from_json(where, text)
    if text and not text.endswith("\0"):
        # Lines are not entries: a value may hold a newline, so only a NUL ends an entry.
        raise BadInput(f"{where}: neither a JSON object nor NAME=VALUE entries each ended by a NUL byte "
                       "(write it with `env -0`, or as JSON)")
    env: dict[str, str] = {}
    for number, entry in enumerate(text.split("\0")[:-1], start=1):
        name, sep, value = entry.partition("=")
        if not sep or not name:
            raise BadInput(f"{where}: entry {number} is not NAME=VALUE")
        _add(where, env, name, value)
    return env


def _env_from_json(where: str, text: str) -> dict[str, str]:
    env: dict[str, str] = {}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, str]:
        for name, value in items:
            if not isinstance(value, str):
                raise BadInput(f"{where}: the value of {name!r} is not a string")
            _add(where, env, name, value)
        return env

    try:
        loaded: object = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:  # its message quotes no text, only where
        raise BadInput(f"{where}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if loaded is not env:
        raise BadInput(f"{where}: a JSON file must be one object of NAME: VALUE strings")
    return env


def _add(where: str, env: dict[str, str], name: str, value: str) -> None:
    if not name or "=" in name or "\0" in name:
        raise BadInput(f"{where}: {name!r} is not a variable name")
    if "\0" in value:
        raise BadInput(f"{where}: the value of {name} holds a NUL byte")
    if name in env:
        raise BadInput(f"{where}: {name} is given twice")
    env[name] = value


def declared_environment(pairs: list[str], env_file: Path | None) -> dict[str, str]:
    env = _parse_env(pairs)
    if env_file is not None:
        for name, value in read_env_file(env_file).items():
            if name in env:
                raise BadInput(f"{name} is given both by --env and by --env-file {env_file}")
            env[name] = value
    return env


def _fresh_instance_dir() -> Path:
    from adapters.durable.private_dir import ensure_private_dir

    user = pwd.getpwuid(os.geteuid()).pw_name
    root = ensure_private_dir(Path(f"/var/tmp/dunscaith-{user}"))
    instances = ensure_private_dir(root / "instances")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return instances / f"{stamp}-{secrets.token_hex(4)}"


@app.command("run", context_settings={"allow_interspersed_args": False})
def run_command(
    ctx: typer.Context,
    command: list[str] = typer.Argument(..., metavar="-- PROGRAM [ARGS]...", help="The worker and its arguments."),
    instance_dir: Path | None = typer.Option(None, "--instance-dir", help="Instance directory (new or empty)."),
    env: list[str] = typer.Option([], "--env", metavar="K=V",
                                  help="The worker's environment, exactly (visible in ps: secrets go in --env-file)."),
    env_file: Path | None = typer.Option(None, "--env-file", metavar="FILE",
                                         help="More of it from a 0600 file: JSON, or NUL-ended K=V (env -0)."),
    cwd: Path | None = typer.Option(None, "--cwd", help="The worker's working directory."),
) -> None:
    """Run PROGRAM as an owned worker; exit with its exit code (128+n for signal n, 127 if it never started)."""
    from adapters.durable.private_dir import UnsafeDirectory
    from adapters.process.wrapper import InstanceDirUnusable, LaunchSpec

    container = _container(ctx)
    declared = declared_environment(env, env_file)
    try:
        directory = instance_dir if instance_dir is not None else _fresh_instance_dir()
        wrapper: PosixWrapper = container.wrapper(directory=directory.absolute())
        wrapper.claim()
    except (InstanceDirUnusable, UnsafeDirectory) as exc:
        raise BadInput(str(exc)) from None
    if instance_dir is None:
        print(f"dunscaith: instance directory: {directory}", file=sys.stderr, flush=True)
    spec = LaunchSpec(tuple(command), declared, os.path.abspath(cwd if cwd is not None else os.getcwd()))
    raise typer.Exit(wrapper.run(spec))


@app.command("exec", hidden=True)
def exec_command() -> None:
    """Internal: the wrapper's child. Never call it yourself."""
    from adapters.process import exec_side

    exec_side.main()


@app.command("terminate")
def terminate_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., metavar="DIR"),
    grace: float = typer.Option(10.0, "--grace", min=0.0, help="Seconds between TERM and KILL."),
    wait: float = typer.Option(30.0, "--wait", min=0.0, help="Seconds to wait for the answer."),
    nonce: str | None = typer.Option(None, "--nonce", help="The instance you mean (default: the one in DIR)."),
) -> None:
    """Ask the wrapper of DIR to end its worker; print confirmed, refused, unanswered or unrequested."""
    from adapters.process.instance_dir import NotAnInstance
    from domain.model.remote.control import ControlError

    container = _container(ctx)
    use_case: TerminateInstance = container.terminate(files=container.instance_files(directory=directory))
    try:
        answer = use_case(grace, wait, nonce)
    except (NotAnInstance, ControlError) as exc:
        raise BadInput(_located(directory, exc)) from None
    print(answer.value)
    raise typer.Exit(answer.exit_code)


@app.command("status")
def status_command(
    ctx: typer.Context,
    directory: Path = typer.Argument(..., metavar="DIR"),
    as_json: bool = typer.Option(False, "--json", help="One JSON object (schema dunscaith.remote.status/1)."),
) -> None:
    """Report the state of an instance directory."""
    from adapters.process.instance_dir import NotAnInstance
    from domain.model.remote.control import ControlError

    container = _container(ctx)
    use_case: ReadStatus = container.read_status(files=container.instance_files(directory=directory))
    try:
        status = use_case()
    except (NotAnInstance, ControlError) as exc:
        raise BadInput(_located(directory, exc)) from None
    if as_json:
        print(json.dumps(status, sort_keys=True))
    else:
        for line in _text_lines(status):
            print(line)


def _located(directory: Path, exc: Exception) -> str:
    from adapters.process.instance_dir import NotAnInstance

    return str(exc) if isinstance(exc, NotAnInstance) else f"{directory}/{exc}"


def _text_lines(status: dict[str, Any]) -> list[str]:
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
        lines.append(f"outcome: {ended}, stdout {out['stdout_bytes']} bytes sha256 {out['stdout_sha256']}")
    return lines
