"""``dunscaith remote run`` and ``remote exec`` without typer: the start of every local job.

Every local job starts a wrapper, so what the wrapper imports before its worker runs is paid per job.
This module imports the wrapper and the standard library only (no typer, pydantic, dependency-injector
or the jobs domain: together ~0.3-1 s on a loaded login node). The front door (``front_door.py``) sends
``remote run`` and ``remote exec`` here before anything else is imported. The parser below accepts
exactly the well-formed command lines the typer command accepts, and hands everything else
(``--help``, an unknown option, a missing value or program) to the typer app, so usage errors and
help read the same on both paths. Nothing is done before that decision.

The environment options (``--env``, ``--env-file``) are read here, for both paths.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from dunscaith.domain.model.path_names import absolute
from dunscaith.entrypoints.cli_support import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    BadInput,
    end_now,
    internal_words,
)

# Neither typing (~3.5 ms of every local job's start: see domain/model/named_tuple.py) nor pathlib (~4 ms:
# the names are str, made absolute as Path.absolute() makes them, path_names.py) is imported here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, NamedTuple, Protocol

    from dunscaith.adapters.process.exec_side import InProcess
    from dunscaith.adapters.process.wrapper import LaunchSpec
    from dunscaith.domain.services.remote.instances import ReadStatus, TerminateInstance

    class Owner(Protocol):
        """What ``own`` needs of a wrapper (``PosixWrapper``, or a test's recorder)."""

        def claim(self) -> None: ...

        def run(self, spec: LaunchSpec) -> int: ...
else:
    from dunscaith.domain.model.named_tuple import NamedTuple

PROG = "dunscaith"
# `remote exec` is the wrapper's child, started with the barrier and the status pipe open on fds 3 and 4
NOT_BY_HAND = ("remote exec is internal: it is the child `dunscaith remote run` starts, and is never run by "
               "hand; give `dunscaith remote run -- PROGRAM [ARGS]...`")
_VALUE_OPTIONS = ("--instance-dir", "--env", "--env-file", "--cwd")


class RunArgs(NamedTuple):  # not a dataclass: ``dataclasses`` costs every job's start ~8 ms to import
    command: list[str]
    instance_dir: str | os.PathLike[str] | None  # the lean parser's are str, typer's Path
    env: list[str]
    env_file: str | os.PathLike[str] | None
    cwd: str | os.PathLike[str] | None


def parse_run_args(argv: list[str]) -> RunArgs | None:
    """The arguments after ``remote run``, parsed as click parses them; None for anything but a plain run.

    Options end at ``--`` or at the first argument that is not an option (the program's own options
    are its own); a repeated single-valued option keeps its last value, as click does.
    """
    values: dict[str, list[str]] = {name: [] for name in _VALUE_OPTIONS}
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            i += 1
            break
        if not token.startswith("-") or token == "-":
            break
        name, eq, value = token.partition("=")
        if name not in values:
            return None  # --help, an unknown option, a short one: typer says what it says
        if not eq:
            if i + 1 >= len(argv):
                return None  # the option's value is missing
            i += 1
            value = argv[i]
        values[name].append(value)
        i += 1
    command = argv[i:]
    if not command or any(v == "" for name, v_ in values.items() if name != "--env" for v in v_[-1:]):
        return None  # no program, or an empty path (Path("") would be "."): typer refuses it by name
    last = {name: v[-1] if v else None for name, v in values.items() if name != "--env"}
    return RunArgs(command, last["--instance-dir"], values["--env"], last["--env-file"], last["--cwd"])


# ---- the worker's environment ----------------------------------------------------------------------

ENV_FILE_MAX_BYTES = 1 << 20  # far above what execve takes; a bigger file is a mistake


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


def read_env_file(path: Path) -> dict[str, str]:
    """The environment in ``path``: yours, 0600 (nothing for group or others), not a symlink.

    Either a JSON object of strings, or NAME=VALUE entries each ended by a NUL byte (what ``env -0``
    writes). An error names the file and the entry's number or name, never a value.
    """
    from dunscaith.adapters.durable.private_read import UnsafeFile, read_private

    where = f"--env-file {path}"
    try:
        data = read_private(path, ENV_FILE_MAX_BYTES, closed_to_others=True)
    except FileNotFoundError:
        raise BadInput(f"{where}: no such file") from None
    except UnsafeFile as exc:
        hint = ("; give the file itself" if "symbolic link" in exc.reason
                else f"; chmod 600 {path}" if "lets others" in exc.reason else "")
        raise BadInput(f"{where}: {exc.reason}{hint}") from None
    except OSError as exc:
        raise BadInput(f"{where}: cannot be read ({exc.strerror or exc})") from None
    return parse_env_file(where, data)


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


def declared_environment(pairs: list[str], env_file: str | os.PathLike[str] | None) -> dict[str, str]:
    env = _parse_env(pairs)
    if env_file is not None:
        from pathlib import Path  # here: named as typer's Path names it, in every message about it

        path = Path(env_file)
        for name, value in read_env_file(path).items():
            if name in env:
                raise BadInput(f"{name} is given both by --env and by --env-file {path}")
            env[name] = value
    return env


# ---- the run ---------------------------------------------------------------------------------------

def fresh_instance_dir() -> Path:
    """A new name under ``/var/tmp/dunscaith-$USER/instances`` (the default record root's folder).

    The root and ``instances/`` are made 0700 when missing; existing ones are used only if they are
    yours and closed to others, and never re-moded (``ensure_private_dir``): a refusal names the
    folder and the fix.
    """
    import secrets
    from datetime import UTC, datetime

    from dunscaith.adapters.durable.private_dir import UnsafeDirectory, default_user_dir, ensure_private_dir

    try:
        root = ensure_private_dir(default_user_dir())
        instances = ensure_private_dir(root / "instances")
    except UnsafeDirectory as exc:
        raise BadInput(f"instance directories cannot be made: {exc}; or give --instance-dir DIR") from None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return instances / f"{stamp}-{secrets.token_hex(4)}"


def own(args: RunArgs, wrapper_for: Callable[..., Owner]) -> int:
    """Claim the instance directory, run the worker under the wrapper ``wrapper_for(directory=...)``
    makes, and return the exit code of ``run`` (the worker's, 128+n, or 127)."""
    from dunscaith.adapters.durable.private_dir import UnsafeDirectory
    from dunscaith.adapters.process.wrapper import InstanceDirUnusable, LaunchNotRecorded, LaunchSpec
    from dunscaith.domain.model.program import program_problem

    problem = program_problem(args.command)
    if problem is not None:  # before the directory is claimed: nothing is recorded for it
        raise BadInput(problem)
    declared = declared_environment(args.env, args.env_file)
    try:
        directory = args.instance_dir if args.instance_dir is not None else fresh_instance_dir()
        wrapper = wrapper_for(directory=absolute(os.fspath(directory), os.getcwd()))  # as Path.absolute() names it
        wrapper.claim()
    except (InstanceDirUnusable, UnsafeDirectory) as exc:
        raise BadInput(str(exc)) from None
    if args.instance_dir is None:
        print(f"{PROG}: instance directory: {directory}", file=sys.stderr, flush=True)
    cwd = os.path.abspath(args.cwd if args.cwd is not None else os.getcwd())
    try:
        return wrapper.run(LaunchSpec(tuple(args.command), declared, cwd))
    except LaunchNotRecorded as exc:  # a full disk, say: nothing ran, and the line says which file
        raise BadInput(str(exc)) from None


# ---- the process owner's composition root -----------------------------------------------------------

class RemoteRoot:
    """The one composition root of the process owner (docs/architecture.md "The composition roots"): the
    lean ``remote run``/``exec`` here and the typer ``remote`` commands (``run`` when typer parses it,
    ``terminate``, ``status``) make their parts from it, each when first asked for, by hand: the wrapper
    (``PosixWrapper`` on the system clock), the instance directory's files and their two use cases. No
    dependency-injector, no settings: a job's start pays for nothing it does not use. A test hands the typer
    commands its own (``obj=RemoteRoot(wrapper=Recorder)``)."""

    __slots__ = ("_wrapper",)

    def __init__(self, wrapper: Callable[..., Owner] | None = None) -> None:
        self._wrapper = wrapper  # a test's wrapper (called with directory=), else PosixWrapper

    def wrapper(self, directory: Path, ended: Callable[[int], None] | None = None,
                in_process: InProcess | None = None) -> Owner:
        """The wrapper of one instance directory; ``ended`` and ``in_process`` as ``run_owned`` gives them."""
        if self._wrapper is not None:
            return self._wrapper(directory=directory)
        from dunscaith.adapters.clock.system import SystemClock
        from dunscaith.adapters.process.wrapper import PosixWrapper

        return PosixWrapper(directory, SystemClock(), ended=ended, in_process=in_process)

    def read_status(self, directory: Path) -> ReadStatus:
        """``remote status DIR``'s use case."""
        from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
        from dunscaith.domain.services.remote.instances import ReadStatus

        return ReadStatus(DirectoryInstanceFiles(directory))

    def terminate(self, directory: Path) -> TerminateInstance:
        """``remote terminate DIR``'s use case (and the local scheduler's cancel in a command's process)."""
        from dunscaith.adapters.clock.system import SystemClock
        from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
        from dunscaith.domain.services.remote.instances import TerminateInstance

        return TerminateInstance(DirectoryInstanceFiles(directory), SystemClock())

    @staticmethod
    def not_an_instance() -> type[Exception]:
        """The instance directory reader's refusal of a folder that holds no instance."""
        from dunscaith.adapters.process.instance_dir import NotAnInstance

        return NotAnInstance

    @staticmethod
    def exec_child() -> None:
        """``remote exec``: become the worker the wrapper started this process for; refused, one line and
        exit 2, in a process the wrapper did not start."""
        from dunscaith.adapters.process import exec_side

        if not exec_side.started_by_wrapper():
            raise BadInput(NOT_BY_HAND)
        exec_side.main()


def main(argv: list[str] | None = None) -> None:
    """``dunscaith remote run|exec ...`` (``argv`` without the program name), run to its end; returns when
    the line is not a plain run, and the front door hands it to the typer app."""
    args_all = sys.argv[1:] if argv is None else argv
    if args_all[:2] == ["remote", "exec"] and len(args_all) == 2:
        try:
            RemoteRoot.exec_child()
        except BadInput as exc:
            end_now(_said(EXIT_BAD_INPUT, str(exc)))
    parsed = parse_run_args(args_all[2:]) if args_all[:2] == ["remote", "run"] else None
    if parsed is not None:
        # Every record is synced and the worker reaped when run_owned returns: the interpreter's teardown
        # (a few ms of every job's start and end) has nothing left to do.
        end_now(run_owned(parsed, in_process=local_shim))


def _shim() -> str:
    """adapters/scheduler/local/exec_shim.py, this install's: the local scheduler's worker program (spawn.SHIM)."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # Path.resolve().parents[2]
    return os.path.join(package, "adapters", "scheduler", "local", "exec_shim.py")


def local_shim(argv: list[str], env: dict[str, str]) -> Callable[[], int] | None:
    """The local scheduler's exec shim as a function of this process (the worker's, forked by the wrapper:
    ``exec_side``), when ``execve`` would only start it with this very interpreter: ``argv`` is
    ``sys.executable -I -S SHIM ENV_FILE -- PROGRAM...`` (``spawn.spawn_owner``) with SHIM this install's
    ``exec_shim.py``. The shim imports nothing of the project and reads neither the interpreter's flags nor
    its environment (``-I -S``); ``exec_side`` gives the child what that interpreter's start would have
    (the environment, the dispositions, no descriptor but 0-2), so the shim does here exactly what it does
    there: reads ENV_FILE, applies the limits, and ``execvpe``s the job (or ends the process with its one
    line and 127), without an interpreter's start (~20 ms) on the path of every local job. Else None: it
    is exec'd. (A memory limit is the shim's watchdog's, sampling the job's resident memory once the job
    is exec'd, so it runs this way too: no address-space limit is set in this process any more.)"""
    if len(argv) < 7 or argv[0] != sys.executable or argv[1:3] != ["-I", "-S"] or argv[5] != "--":
        return None
    shim_path = _shim()
    try:
        if not os.path.samefile(argv[3], shim_path):
            return None
        with open(argv[4], "rb") as file:
            limits = json.load(file).get("limits") or {}
        if not isinstance(limits, dict):
            return None
    except (OSError, ValueError, AttributeError):  # the shim started anew says what is wrong with the file
        return None
    import importlib.util

    spec = importlib.util.spec_from_file_location("dunscaith_local_exec_shim", shim_path)
    if spec is None or spec.loader is None:
        return None
    shim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shim)

    def program() -> int:
        shim.main(argv[3:])  # execs the job, or ends the process (its line on stderr, 127)
        return 127  # not reached

    return program


def run_owned(parsed: RunArgs, ended: Callable[[int], None] | None = None,
              in_process: InProcess | None = None) -> int:
    """``remote run``'s whole life for ``parsed``: its exit code, every error one line on stderr.

    ``main`` runs it in a process of its own; a forwarded command runs it in a child forked from the
    forwarded side (adapters/process/forked_owner.py), without a second interpreter start-up; ``ended``
    is then told the worker's code as soon as its outcome is recorded (PosixWrapper's ``ended``), and
    may run the forwarded command in the worker's process without a new interpreter (``in_process``)."""
    try:
        return own(parsed, lambda directory: RemoteRoot().wrapper(directory, ended, in_process))
    except KeyboardInterrupt:
        return _said(EXIT_INTERRUPTED, "interrupted")
    except BadInput as exc:
        return _said(EXIT_BAD_INPUT, str(exc))
    except BrokenPipeError:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's own flush error
        return 1
    except Exception as exc:  # an error of the program: exit 3, one line, the detail only on request
        if os.environ.get(f"{PROG.upper()}_DEBUG"):
            import traceback

            print("".join(traceback.format_exception(exc)), file=sys.stderr)
        return _said(EXIT_INTERNAL, f"internal error: {internal_words(exc)}")


def _said(code: int, line: str) -> int:
    print(f"{PROG}: {line}", file=sys.stderr, flush=True)
    return code
