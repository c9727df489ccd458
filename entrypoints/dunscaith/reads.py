"""The front door's plain ``status``/``list``: the commands a user waits on most, run without typer.

``status JOB``, ``status JOB --json`` (``--json`` before or after JOB), ``status`` and ``status --json``
(every job, as list), ``list`` and ``list --json``: these lines are parsed here exactly as click parses them
(a command word, at most one ``--json``, at most one word that is not an option) and run by the very
bodies the typer commands run (``status_list.py``), with the composition root (``wiring.Root``) in the
context. Every other line goes on to the typer app, unchanged: help, an option this
does not know (``--state``, ``--watch``, ``--all``, ``--help``, ``--``), a second argument, an empty word.
So do a line run as a forwarded command (``DUNSCAITH_FORWARDED``: the owning host's side answers through
the app), a store other than SQLite (``records.backend``: the container opens it), and a job whose
pointer names another record root of this host, which the typer path follows (``edge._follow_root``).
A job whose pointer names another host was forwarded by ``routing`` before this path is asked.

What the line ends with is what the app's ``cli_support.run`` would end with: the same one line on stderr
for bad input and for a store or a rule that refused (``refusals``: ``app._refusals``' two), the same
exit codes, the same ``--json`` error object (``cli_support.run_plain``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

# a forwarded command is answered by the app (the hidden flag's one module imports nothing)
from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV

# command -> whether it takes one JOB word (both take --json, once)
PLAIN: dict[str, bool] = {"status": True, "list": False}


def plain_line(argv: Sequence[str]) -> tuple[str, str | None, bool] | None:
    """(command, JOB or None, --json) of a plain ``status``/``list`` line (``argv`` without the program),
    else None: the typer app parses it."""
    if not argv or argv[0] not in PLAIN:
        return None
    as_json = False
    jobs: list[str] = []
    for word in argv[1:]:
        if word == "--json" and not as_json:
            as_json = True
        elif not word or word.startswith("-"):
            return None  # an option this path does not take ("--", --help, --state...): typer says what it says
        else:
            jobs.append(word)
    if len(jobs) > (1 if PLAIN[argv[0]] else 0):
        return None
    return argv[0], jobs[0] if jobs else None, as_json


def refusals() -> tuple[type[Exception], ...]:
    """What the app's ``run`` turns into one line and exit 2 (``app._refusals``: a store, a rule)."""
    from dunscaith.domain.model.jobs.errors import JobsError
    from dunscaith.ports.job_store import StoreError

    return (StoreError, JobsError)


def read(argv: list[str]) -> int | None:
    """Run a plain ``status``/``list`` line and return its exit status; None when the app must run it."""
    line = plain_line(argv)
    if line is None or os.environ.get(FORWARDED_ENV):
        return None
    from dunscaith.entrypoints.dunscaith.root.settings_cache import plain_settings

    settings = plain_settings()  # remembered, or validated now by load_settings (BadInput when wrong)
    if settings.records.backend != "sqlite":
        return None  # the other stores are opened on the app's path
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.entrypoints.dunscaith import edge, routing, status_list
    from dunscaith.entrypoints.dunscaith.root.wiring import Root

    command, job, as_json = line
    routing.ARGV[:] = argv  # the user's own words, for a forward and for the refusal naming another root
    root = Root(settings)
    try:
        if job is not None:
            pointer = root.use_cases.owning_host().earlier_root(JobId(job))
            if pointer is not None and edge.root_to_follow(pointer, settings.records.root, settings.records.backend):
                return None  # another record root of this host: the app follows it (edge._follow_root)
        # the root hands the commands' bodies their use cases, as @edge.injected does on the typer path
        at = edge.at_root(edge.RootContext(root), root.use_cases)
        if command == "status":
            reads = status_list.Reads(root.use_cases.status, root.use_cases.sweep_status, root.use_cases.listing)
            return int(status_list.status(at, reads, job, as_json, None))
        return status_list.list_jobs(at, root.use_cases.listing, as_json)
    except Exception as exc:
        typer: Any = sys.modules.get("typer")  # imported only by a forward (edge.forward_and_exit)
        if typer is not None and isinstance(exc, typer.Exit):
            return int(exc.exit_code)
        raise
    finally:
        root.shutdown_resources()
