"""What every console script shares: one clear line for bad input, exit codes, no stray tracebacks."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import typer

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


class BadInput(Exception):
    """The user's input (or a file the user pointed at) cannot be used; the message says why."""


def new_app(help_text: str) -> typer.Typer:
    # rich_markup_mode=None keeps usage errors to plain click lines and keeps rich off the import path.
    return typer.Typer(
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        help=help_text,
    )


def run(app: typer.Typer, prog: str, argv: list[str] | None = None,
        redact: Callable[[str], str] = lambda s: s) -> None:
    """Run ``app`` and turn every way it can end into an exit code and at most one line on stderr."""
    try:
        result = app(args=argv, prog_name=prog, standalone_mode=False)
    except typer.Exit as exc:
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
    sys.exit(result if isinstance(result, int) else 0)
