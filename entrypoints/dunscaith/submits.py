"""The front door's plain ``submit``: ``submit -- COMMAND...`` run to its outcome without typer.

``submit [--name NAME] [--json] [--parsable] [--follow|-f] -- COMMAND ARGS...``: a line of these options
(each at most once, ``--name NAME`` or ``--name=NAME``), then ``--`` and at least one word, is parsed here
as click parses it (after ``--`` every word is the command's, options included) and run by the very body
the typer command runs (``submit_job.submit``), with the composition root (``wiring.Root``) in the
context. Every other line goes on to the typer app, unchanged: help, a SCRIPT (no
``--``), any other option (``--cluster``, ``--mem``, ``--array``...), an option given twice, a name that
is empty or starts with ``-``, nothing after ``--``. So do a line run as a forwarded command
(``DUNSCAITH_FORWARDED``) and a store other than SQLite (``records.backend``: the container opens it).

What the line ends with is what the app's ``cli_support.run`` would end with (``cli_support.run_plain``):
the same one line on stderr for bad input and for a store or a rule that refused (``reads.refusals``),
the same exit codes, the same ``--json`` error object; a supervision drained by a signal ends the process
by that signal, as on the typer path.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Sequence
from typing import Any, NamedTuple

# a forwarded command is answered by the app (the hidden flag's one module imports nothing)
from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV

FLAGS = {"--json": "as_json", "--parsable": "parsable", "--follow": "follow", "-f": "follow"}


class PlainSubmit(NamedTuple):
    words: list[str]  # the command and its arguments (after --)
    name: str | None = None
    as_json: bool = False
    parsable: bool = False
    follow: bool = False


def plain_line(argv: Sequence[str]) -> PlainSubmit | None:
    """The options and command of a plain ``submit ... -- COMMAND...`` line (``argv`` without the program),
    else None: the typer app parses it."""
    if argv[:1] != ["submit"] or "--" not in argv:
        return None
    end = list(argv).index("--")
    words = list(argv[end + 1:])
    if not words:
        return None  # typer says what it says ("nothing to run")
    given: dict[str, Any] = {}
    options = list(argv[1:end])
    while options:
        word = options.pop(0)
        if word in FLAGS and FLAGS[word] not in given:
            given[FLAGS[word]] = True
        elif word == "--name" and options and "name" not in given:
            given["name"] = options.pop(0)
        elif word.startswith("--name=") and "name" not in given:
            given["name"] = word[len("--name="):]
        else:
            return None  # another option, one given twice, a word before "--": typer parses it
    name = given.get("name")
    if name is not None and (not name or name.startswith("-")):
        return None  # click's own reading of those is typer's to give
    return PlainSubmit(words, name, given.get("as_json", False), given.get("parsable", False),
                       given.get("follow", False))


def submit(argv: list[str]) -> int | None:
    """Run a plain ``submit -- COMMAND`` line and return its exit status; None when the app must run it."""
    line = plain_line(argv)
    if line is None or os.environ.get(FORWARDED_ENV):
        return None
    # The imports below define ~250 modules' objects, none of them garbage: the collector's passes over
    # them while they load (~50, 3-6 ms) find nothing. It is back on, with what is loaded set aside
    # (gc.freeze), before anything runs.
    gc.disable()
    try:
        from dunscaith.entrypoints.dunscaith.root.settings_cache import plain_settings

        settings = plain_settings()  # remembered, or validated now by load_settings (BadInput when wrong)
        if settings.records.backend != "sqlite":
            return None  # the other stores are opened on the app's path
        from dunscaith.entrypoints.dunscaith import edge, routing, submit_job
        from dunscaith.entrypoints.dunscaith.root.wiring import Root
        from dunscaith.entrypoints.dunscaith.supervision import Supervising
    finally:
        gc.freeze()
        gc.enable()

    routing.ARGV[:] = argv  # the user's own words, for a forward
    root = Root(settings)
    try:
        at = edge.at_root(edge.RootContext(root), root.use_cases)
        cases = root.use_cases
        given = submit_job.Submitting(cases.record_job, cases.record_sweep, cases.owning_host,
                                      Supervising(cases.supervise_job, cases.supervise_sweep, cases.notify_sweep))
        return submit_job.submit(at, given, line.words, as_command=True, name=line.name, follow=line.follow,
                                 as_json=line.as_json, parsable=line.parsable)
    except Exception as exc:
        typer: Any = sys.modules.get("typer")  # imported only by a forward (edge.forward_and_exit)
        if typer is not None and isinstance(exc, typer.Exit):
            return int(exc.exit_code)
        raise
    finally:
        root.shutdown_resources()
