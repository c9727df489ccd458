"""What every console script shares: one clear line for bad input, exit codes, no stray tracebacks."""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

# typer is imported where it is used: launch() below must be able to catch a Ctrl-C from the very
# start, and typer alone takes tens of milliseconds to import.
if TYPE_CHECKING:
    import typer

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped by Ctrl-C


class BadInput(Exception):
    """The user's input (or a file the user pointed at) cannot be used; the message says why."""


def new_app(help_text: str) -> typer.Typer:
    import typer

    # rich_markup_mode=None keeps usage errors to plain click lines and keeps rich off the import path.
    return typer.Typer(
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        help=help_text,
    )


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
        redact: Callable[[str], str] = lambda s: s, obj: Any = None) -> None:
    """Run ``app`` and turn every way it can end into an exit code and at most one line on stderr.

    ``obj`` becomes the root context's ``ctx.obj`` (tests give their own container this way)."""
    import typer

    _Interrupts.install()
    try:
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
            print(f"{prog}: {' '.join(exc.format_message().split())}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except BadInput as exc:
        print(f"{prog}: {redact(str(exc))}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    except BrokenPipeError:
        # The reader went away; nothing we print matters any more.
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - silence the interpreter's own flush error
        sys.exit(1)
    except Exception as exc:  # an error of the program: exit 3, one line, the detail only on request
        if os.environ.get(f"{prog.upper()}_DEBUG"):
            import traceback

            print(redact("".join(traceback.format_exception(exc))), file=sys.stderr)
        print(f"{prog}: internal error: {redact(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        sys.exit(EXIT_INTERNAL)
    if result == EXIT_INTERRUPTED and _Interrupts.seen:  # typer's KeyboardInterrupt → return 130
        _interrupted(prog)
    sys.exit(result if isinstance(result, int) else 0)


def launch(prog: str, module: str) -> None:
    """A console script's start: catch Ctrl-C from the first import on, then run ``module.main()``.

    A short command spends most of its life importing; a Ctrl-C then would print a traceback. Nothing
    is recorded before ``main`` runs, so an interrupt here only needs its one line and exit 130.
    """
    _Interrupts.install()
    try:
        main = importlib.import_module(module).main
    except KeyboardInterrupt:
        _interrupted(prog)
    main()


def dunscaith() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "_forwarded":  # the host side of forwarding: no CLI to build
        from entrypoints.dunscaith.forwarding_root import main

        main(sys.argv[2])
    # `remote run` and `remote exec` start every local job: they go to a module that imports the wrapper
    # and nothing of typer (it hands anything but a plain run back to the app).
    lean = sys.argv[1:2] == ["remote"] and sys.argv[2:3] in (["run"], ["exec"])
    launch("dunscaith", "entrypoints.dunscaith.remote_run" if lean else "entrypoints.dunscaith.app")


def qdevices() -> None:
    launch("qdevices", "entrypoints.qdevices.app")
