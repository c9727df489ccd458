"""The ``dunscaith`` console script's front door: which path runs, decided before typer is imported.

Each path is the cheapest that can serve the command line:

- ``--version``: the version constant, printed from here (no import of ours but the constant);
- a shell's completion request for a job's or a cluster's name (``completion``): the pointer folder's
  names and the configuration's clusters, no typer; any other completion request goes on to the app;
- ``_forwarded TOKEN``: the owning host's side of a forwarded command (``forwarding_root``), no CLI;
- ``remote run`` / ``remote exec``: the start of every local job (``remote_run``), no typer; a line it
  does not take as a plain run goes on to the app;
- a plain job command for another host's job (``routing``): forwarded from here, without the CLI;
- anything else, every command line of this host's jobs included: the typer app, which parses it and
  imports only that command's module (``lazy_commands``).

Nothing imports this module back: a path that must run a whole dunscaith command again in this process
(the forwarded side's in-process worker) is handed ``main`` as a function. Each path is imported only
when it is taken: that is what keeps ``remote run -- true`` and a forwarded ``status`` lean.
"""

from __future__ import annotations

import atexit
import os
import sys

# a forwarded command never forwards again (the hidden flag's one module imports nothing)
from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV

PROG = "dunscaith"
COMPLETE_VAR = "_DUNSCAITH_COMPLETE"  # completion.COMPLETE_VAR: typer's name for it, _{PROG}_COMPLETE


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        # the constant the app's --version prints too (tests/unit/test_version.py holds it to the package's)
        from dunscaith.domain.model.version import VERSION

        print(f"{PROG} {VERSION}")
        return
    # every other path imports these; --version above needs neither
    from dunscaith.entrypoints.cli_support import home_missing, launch, run_plain

    if os.environ.get(COMPLETE_VAR):
        from dunscaith.entrypoints.dunscaith.completion import complete

        run_plain(PROG, argv, lambda _: complete())  # exits when it answered; else typer answers
    if len(argv) == 2 and argv[0] == "_forwarded":
        # imported here: the host side of a hop must not pay for the CLI nor the wrapper's start
        from dunscaith.entrypoints.dunscaith.forwarding_root import main as serve

        serve(argv[1], again=main)
    if argv[:1] != ["remote"]:
        # every other command reads the configuration in the home folder, and may make its folders there:
        # a missing home is one line and exit 2, never made (the remote commands do not use it)
        run_plain(PROG, argv, home_missing)
        # before the first dataclass is defined: their generated methods' code, compiled once and kept
        # (root/dataclass_code.py: ~700 compilations, most of a command's import of the jobs domain)
        from dunscaith.entrypoints.dunscaith.root import dataclass_code

        dataclass_code.install()
        atexit.register(dataclass_code.save)  # the paths that end by sys.exit; the app's below, before os._exit
    if argv[:1] == ["remote"] and argv[1:2] in (["run"], ["exec"]):
        launch(PROG, "dunscaith.entrypoints.dunscaith.remote_run")  # returns when the line is not a plain run
    elif argv[:1] and not os.environ.get(FORWARDED_ENV):
        # imported here: remote run (every local job's start) has no use for it
        from dunscaith.entrypoints.dunscaith.routing import ROUTED, route

        if argv[0] in ROUTED:
            # a job command for another host's job forwards from here, without the CLI's start-up; any
            # other command (and this one, if it runs here) goes on to the app
            run_plain(PROG, argv, route)
    from dunscaith.entrypoints.cli_support import collect_later, end_at_once

    collect_later()  # the app's callback turns the collector back on, once the command's modules are loaded
    try:
        launch(PROG, "dunscaith.entrypoints.dunscaith.app")
    except SystemExit as ended:  # every way the app ends (cli_support.run): its code, without the teardown
        if argv[:1] != ["remote"]:
            dataclass_code.save()
        end_at_once(ended)
