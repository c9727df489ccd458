"""What every console script shares: one clear line for bad input, exit codes, no stray tracebacks."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

# typer is imported where it is used: launch() below must be able to catch a Ctrl-C from the very
# start, and typer alone takes tens of milliseconds to import.
from dunscaith.domain.model.shown import one_line, reason

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (~3.5 ms) on every local job's start
if TYPE_CHECKING:
    from typing import Any, NoReturn

    import typer

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


class BadInput(Exception):
    """The user's input (or a file the user pointed at) cannot be used; the message says why."""


def _version(prog: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{prog} {version('dunscaith')}"
    except PackageNotFoundError:  # run from a tree that was never installed
        return f"{prog} (not installed)"


def _clean_metavars(core: Any) -> None:
    """Help that reads like every other tool's: JOB, [JOB], --resume RECORD, never {JOB}, [[JOB]],
    <list[str]> or <int range> (typer's own rendering of the Python types)."""

    def base(param: Any) -> str:
        return str(param.metavar or (param.name or "value").upper())

    def usage_name(self: Any) -> str:
        name = base(self)
        if not self.required and not name.startswith("["):
            name = f"[{name}]"
        return name + ("..." if self.nargs != 1 and "..." not in name else "")

    def option_type(self: Any, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        return base(self) + ("..." if self.nargs != 1 else "")

    core.TyperArgument.display_type_rich = lambda self, ctx: None
    core.TyperArgument._usage_display_name = usage_name
    core.TyperArgument._rich_display_name = lambda self: base(self)
    core.TyperOption.display_type_rich = option_type


def _lean_coercion(core: Any) -> None:
    """Typer converts every parameter's value through a pydantic ``TypeAdapter`` built when the command
    first runs (``typer._coercion.build_runtime_param``): importing pydantic with its plugin loader costs
    more than importing typer. The values our commands take are mostly a word (``str``), words
    (``list[str]``), a flag (``bool``), a whole number, or a path parsed by our own function (``parser=``):
    those are converted here as pydantic converts them when the value is plainly right (digits within
    ``min``/``max``; a parser that returns), and handed to typer's own conversion otherwise, so a wrong
    value is refused in typer's words, exactly as before. Anything else (a choice, a file, a float, a
    date, a tuple) is typer's from the start."""
    import re
    from dataclasses import dataclass

    try:  # typer's own internals (pyproject keeps typer below 0.30): where they differ, typer converts everything
        from typer import _coercion

        core._TyperParameter.get_runtime_param  # noqa: B018 (only whether it is there)
        _coercion.RuntimeParam  # noqa: B018
    except (ImportError, AttributeError):
        return
    if getattr(core._TyperParameter.get_runtime_param, "lean", False):
        return
    digits = re.compile(r"-?[0-9]{1,18}")

    class _Slow(Exception):
        pass

    @dataclass(frozen=True)
    class LeanParam(_coercion.RuntimeParam):
        convert: Callable[[Any], Any]
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                return self.convert(value)
            except _Slow:
                slow = _coercion.build_runtime_param(self.descriptor)
                return slow._coerce_value(value, param=param, ctx=ctx)

    def word(value: Any) -> Any:
        if type(value) is not str:
            raise _Slow
        return value

    def flag(value: Any) -> Any:
        if type(value) is not bool:
            raise _Slow
        return value

    def words(value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or any(type(item) is not str for item in value):
            raise _Slow
        return list(value)

    def whole(low: Any, high: Any) -> Callable[[Any], Any]:
        def convert(value: Any) -> Any:
            if type(value) is str and digits.fullmatch(value):
                value = int(value)
            if type(value) is not int or (low is not None and value < low) or (high is not None and value > high):
                raise _Slow
            return value

        return convert

    def parsed(parser: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def convert(value: Any) -> Any:
            try:
                return parser(value)
            except Exception:  # typer's conversion calls it again and says what it says
                raise _Slow from None

        return convert

    def lean(descriptor: Any) -> Callable[[Any], Any] | None:
        annotation, info = descriptor.annotation, descriptor.parameter_info
        if descriptor.is_file or descriptor.is_choice:
            return None
        if info.parser is not None:
            return None if descriptor.is_list or descriptor.is_tuple else parsed(info.parser)
        if descriptor.is_path:
            return None
        if annotation is str:
            return word
        if annotation is bool:
            return flag
        if annotation == list[str]:
            return words
        if annotation is int and not info.clamp:
            return whole(info.min, info.max)
        return None

    original = core._TyperParameter.get_runtime_param

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            convert = lean(self.type_descriptor)
            if convert is not None:
                self._runtime_param = LeanParam(self.type_descriptor.parameter_info, self.type_descriptor.annotation,
                                                convert, self.type_descriptor)
        return original(self)

    get_runtime_param.lean = True  # type: ignore[attr-defined]
    core._TyperParameter.get_runtime_param = get_runtime_param


def new_app(help_text: str, prog: str = "dunscaith") -> typer.Typer:
    import typer
    import typer.core

    _clean_metavars(typer.core)
    _lean_coercion(typer.core)

    # rich_markup_mode=None keeps usage errors to plain click lines and keeps rich off the import path.
    app = typer.Typer(
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        help=help_text,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    )

    return app


def finish_help(app: typer.Typer, examples: dict[str, list[str]], epilog: str,
                epilogs: dict[str, str] | None = None) -> None:
    """Every command of ``app`` gets its examples and the exit-code epilog (its own, if it has one)."""
    for info in app.registered_commands:
        name = info.name or (info.callback.__name__.replace("_", "-") if info.callback else "")
        lines = examples.get(name, [])
        shown = ("\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines) + "\n\n") if lines else ""
        info.epilog = shown + (info.epilog or (epilogs or {}).get(name) or epilog)


def version_flag(prog: str) -> Any:
    """The --version option of a root callback (the one that prints ``prog VERSION`` and exits 0)."""
    import typer

    def show_version(value: bool) -> None:
        if value:
            print(_version(prog))
            raise typer.Exit(0)

    return typer.Option(False, "--version", callback=show_version, is_eager=True, help="print the version and exit")


def wants_json(argv: list[str] | None) -> bool:
    words = sys.argv[1:] if argv is None else argv
    return "--json" in words[: words.index("--")] if "--" in words else "--json" in words


def json_error(code: str, message: str, exit_code: int) -> None:
    """The one shape of a refusal or an error under --json (docs/json.md), on stdout."""
    import json

    try:
        print(json.dumps({"error": {"code": code, "message": message, "exit_code": exit_code}}), flush=True)
    except (BrokenPipeError, OSError, ValueError):
        pass


class _Interrupts:
    """Whether a Ctrl-C reached this process: typer turns a KeyboardInterrupt into a silent 130, which a
    command could also return on its own, so the handler itself keeps the fact."""

    seen = False

    @classmethod
    def handler(cls, signum: int, frame: FrameType | None) -> None:
        cls.seen = True
        raise KeyboardInterrupt

    @classmethod
    def install(cls) -> None:
        cls.seen = False
        try:
            # Only in place of Python's own handler: a caller (or a test) that set its own keeps it.
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                signal.signal(signal.SIGINT, cls.handler)
        except ValueError:  # not the main thread: signals cannot be handled here anyway
            pass


def _interrupted(prog: str) -> None:
    print(f"{prog}: interrupted", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)


def run(app: typer.Typer, prog: str, argv: list[str] | None = None,
        redact: Callable[[str], str] = lambda s: s, obj: Any = None,
        refusals: tuple[type[Exception], ...] | Callable[[], tuple[type[Exception], ...]] = ()) -> None:
    """Run ``app`` and turn every way it can end into an exit code and at most one line on stderr.

    ``obj`` becomes the root context's ``ctx.obj`` (tests give their own container this way).
    ``refusals``: errors whose message is for the user (a damaged store, a rule that refused), one line
    and exit 2 wherever they are raised, never exit 3; or a function that gives them, called only once
    something is raised (so that printing help imports none of the modules they live in)."""
    import typer

    _Interrupts.install()
    try:
        _version_alone(sys.argv[1:] if argv is None else argv)
        result = app(args=argv, prog_name=prog, standalone_mode=False, obj=obj)
    except KeyboardInterrupt:  # outside typer's own catch (parsing, completion, closing)
        _interrupted(prog)
    except typer.Exit as exc:
        if exc.exit_code == EXIT_INTERRUPTED and _Interrupts.seen:
            _interrupted(prog)
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(EXIT_BAD_INPUT)
    except typer.TyperException as exc:  # typer's own click: usage errors and bad parameters
        if type(exc).__name__ == "NoArgsIsHelpError":
            print(exc.format_message(), file=sys.stderr)
        else:
            message = one_line(" ".join(_plain_usage(exc).split()))
            print(f"{prog}: {message}", file=sys.stderr)
            if wants_json(argv):
                json_error("usage", message, EXIT_BAD_INPUT)
        sys.exit(EXIT_BAD_INPUT)
    except BadInput as exc:
        _bad_input(prog, argv, redact, exc)
    except BrokenPipeError:
        _reader_gone()
    except Exception as exc:
        if isinstance(exc, refusals if isinstance(refusals, tuple) else refusals()):
            _refused(prog, redact, exc)
        _internal(prog, argv, redact, exc)  # an error of the program: exit 3, one line, the detail on request
    if result == EXIT_INTERRUPTED and _Interrupts.seen:  # typer's KeyboardInterrupt → return 130
        _interrupted(prog)
    sys.exit(result if isinstance(result, int) else 0)


def _version_alone(words: list[str]) -> None:
    """``--version`` prints the version and nothing else: with other words (``--version extra``) it would
    print it and drop them without a word, as typer's eager option does."""
    leading = words[:next((i for i, word in enumerate(words) if not word.startswith("-")), len(words))]
    if "--version" in leading and len(words) > 1:
        raise BadInput("--version takes nothing else: give it alone (--version), or drop it")


def _refused(prog: str, redact: Callable[[str], str], exc: Exception) -> NoReturn:
    print(f"{prog}: {one_line(redact(' '.join(str(exc).split())))}", file=sys.stderr)
    sys.exit(EXIT_BAD_INPUT)


def _plain_usage(exc: Exception) -> str:
    """A usage error's line, with typer's pydantic wording of a bad option value in plain words."""
    cause: Any = exc.__cause__
    message = getattr(exc, "message", None)
    if message is not None and type(cause).__name__ == "ValidationError" and hasattr(cause, "errors"):
        from dunscaith.entrypoints.plain_words import plain

        errors = cause.errors()
        if errors:
            exc.message = plain(errors[0])  # type: ignore[attr-defined]
    return str(exc.format_message())  # type: ignore[attr-defined]


def _bad_input(prog: str, argv: list[str] | None, redact: Callable[[str], str], exc: BadInput) -> NoReturn:
    message = one_line(redact(str(exc)))
    print(f"{prog}: {message}", file=sys.stderr)
    if wants_json(argv):
        json_error("bad-input", message, EXIT_BAD_INPUT)
    sys.exit(EXIT_BAD_INPUT)


def _reader_gone() -> NoReturn:
    # The reader went away; nothing we print matters any more.
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's own flush error
    sys.exit(1)


def internal_words(exc: BaseException, prog: str = "dunscaith") -> str:
    """An error of the program: a system call's in plain words (what, where), its kind in parentheses for
    the report; any other names its kind first, as a report needs it."""
    hint = f"{prog.upper()}_DEBUG=1 shows where; please report it"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{reason(exc)} ({type(exc).__name__}; {hint})"
    return f"{type(exc).__name__}: {exc} ({hint})"


def _internal(prog: str, argv: list[str] | None, redact: Callable[[str], str], exc: Exception) -> NoReturn:
    if os.environ.get(f"{prog.upper()}_DEBUG"):
        import traceback

        print(redact("".join(traceback.format_exception(exc))), file=sys.stderr)
    message = one_line(redact(internal_words(exc, prog)))
    print(f"{prog}: internal error: {message}", file=sys.stderr)
    if wants_json(argv):
        json_error("internal", message, EXIT_INTERNAL)
    sys.exit(EXIT_INTERNAL)


def run_plain(prog: str, argv: list[str], body: Callable[[list[str]], int | None],
              refusals: Callable[[], tuple[type[Exception], ...]] = tuple) -> None:
    """Run ``body(argv)`` without typer, ending every way ``run`` ends (one line, the same exit codes).

    ``body`` returns an exit status to end with, or None when it did nothing and the app should run.
    ``refusals``: as ``run``'s (called only once something is raised)."""
    _Interrupts.install()
    try:
        code = body(argv)
    except KeyboardInterrupt:
        _interrupted(prog)
    except BadInput as exc:
        _bad_input(prog, argv, lambda s: s, exc)
    except BrokenPipeError:
        _reader_gone()
    except Exception as exc:
        if isinstance(exc, refusals()):
            _refused(prog, lambda s: s, exc)
        _internal(prog, argv, lambda s: s, exc)
    if code is not None:
        end_now(code)


def home_missing(argv: list[str] | None = None) -> None:
    """None, or BadInput when the user's home folder (HOME, else the password database's) does not exist.

    The configuration, pointers, site locks and records live in it, and neither program ever makes it or a
    folder above it (``HOME=/nonexistent/home dunscaith list`` made ``/nonexistent``): a command is refused
    in one line instead. A request for help is answered all the same.
    """
    if argv is not None and ("--help" in argv or "-h" in argv):
        return None
    import pwd

    try:
        home = os.environ.get("HOME") or pwd.getpwuid(os.geteuid()).pw_dir
    except KeyError:
        raise BadInput(f"HOME is not set and uid {os.geteuid()} has no home folder in the password database: "
                       "set HOME to your home folder") from None
    if os.path.isdir(home) or not os.path.isabs(home):  # a relative HOME: the settings refuse it in their words
        return None
    raise BadInput(f"the home folder {home} does not exist: its folders are made only inside an existing home, "
                   "never the home itself; set HOME to your home folder")


def end_now(code: int) -> NoReturn:
    """Exit with ``code`` without the interpreter's teardown (~10 ms of a short command's life): for a
    command whose every record is already synced and whose output went out unbuffered or is flushed here."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away: nothing more to say to it
            pass
    os._exit(code)


def collect_later() -> None:
    """No garbage collection while a command's modules load: they define thousands of objects, none of them
    garbage, and the collector's passes over them found nothing (10-15% of a short command's time). The
    command's group callback turns it back on (``collect_again``) before the command parses its arguments."""
    import gc

    gc.disable()


def collect_again() -> None:
    """The collector back on (``collect_later``), with what is loaded so far set aside (``gc.freeze``: the
    modules' objects, never garbage). A no-op where nothing turned it off (a test running the app)."""
    import gc

    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def end_at_once(ended: SystemExit) -> NoReturn:
    """A command that ended (``run``'s ``sys.exit``) ends the process now (``end_now``), without the
    interpreter's teardown of every module loaded (~20% of a short command's life); its records are synced
    and its parts closed already (the root's resources close with the command's context). A thread still
    running that is not a daemon keeps the interpreter's own ending, which waits for it."""
    code = ended.code
    threading = sys.modules.get("threading")
    if threading is not None and any(t is not threading.main_thread() and not t.daemon and t.is_alive()
                                     for t in threading.enumerate()):
        raise ended
    if code is None or (isinstance(code, int) and not isinstance(code, bool)):
        end_now(code or 0)
    raise ended


def launch(prog: str, module: str) -> None:
    """A console script's start: catch Ctrl-C from the first import on, then run ``module.main()``.

    A short command spends most of its life importing; a Ctrl-C then would print a traceback. Nothing
    is recorded before ``main`` runs, so an interrupt here only needs its one line and exit 130.
    """
    _Interrupts.install()
    try:
        __import__(module)  # importlib.import_module's work, without importing importlib (~0.3 ms)
        main = sys.modules[module].main
    except KeyboardInterrupt:
        _interrupted(prog)
    main()
