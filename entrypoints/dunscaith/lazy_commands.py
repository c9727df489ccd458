"""The job commands (and ``config``), each module imported only when its command runs (or shows its help).

``dunscaith --help`` lists every command from the table below (name, module, the first paragraph of its
help) and imports none of them: a command module brings the jobs domain, and importing that cost more
than typer itself. ``dunscaith status ...`` imports the status module alone. A unit test holds the table
to the commands' own help texts, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click as click  # typer's own click: the real one is not installed, nor imported
from typer._click.utils import make_default_short_help
from typer.core import TyperGroup

# command -> (its module, the first paragraph of its help: what `dunscaith --help` lists)
LAZY: dict[str, tuple[str, str]] = {
    'submit': ('dunscaith.entrypoints.dunscaith.commands.submit',
        'Record a job, submit it held, release it once it is confirmed, and supervise it to its outcome.'),
    'supervise': ('dunscaith.entrypoints.dunscaith.commands.submit',
        'Reattach a supervisor to a job, a sweep or (--all) every Unattended job (never one another holds).'),
    'status': ('dunscaith.entrypoints.dunscaith.commands.status',
        'What the record says about a job (every job without JOB), and whether a supervisor watches it.'),
    'list': ('dunscaith.entrypoints.dunscaith.commands.status',
        "This host's jobs as a table, newest first, a screenful at a time (pruned ones only with --all)."),
    'watch': ('dunscaith.entrypoints.dunscaith.commands.watch',
        'Follow a job supervised elsewhere (another terminal or login node, or nobody), read-only, to its end.'),
    'logs': ('dunscaith.entrypoints.dunscaith.commands.logs',
        "Print a job's stdout (or --stderr), from the path its scheduler gave (local or Slurm)."),
    'events': ('dunscaith.entrypoints.dunscaith.commands.events',
        "The job's record as a timeline: each decision and scheduler answer, when, and who acted, by attempt."),
    'stop': ('dunscaith.entrypoints.dunscaith.commands.emergency',
        "Stop every scheduler object that carries JOB's name, with no record and no SSH (needs --emergency)."),
    'hold': ('dunscaith.entrypoints.dunscaith.commands.requests',
        "Hold the job's object (not started yet) until `release`; no new object is released meanwhile."),
    'release': ('dunscaith.entrypoints.dunscaith.commands.requests',
        'Release a job held by `hold`.'),
    'cancel': ('dunscaith.entrypoints.dunscaith.commands.requests',
        "Stop the job's object, running or not, and make no new attempt: the outcome is cancelled."),
    'give-up': ('dunscaith.entrypoints.dunscaith.commands.requests',
        "Make no new attempt: the current attempt's end is the job's outcome."),
    'abandon': ('dunscaith.entrypoints.dunscaith.commands.requests',
        'Let the job go: its open attempts move to the residual list and the record settles.'),
    'requeue': ('dunscaith.entrypoints.dunscaith.commands.requests',
        "Put the job's started object back in the queue, once (Slurm; the local scheduler refuses)."),
    'resubmit': ('dunscaith.entrypoints.dunscaith.commands.requests',
        "Replace the job's object that has not started by a new attempt (a new object, a new nonce), or run a "
        "job that failed again as a new attempt; --cpus, --memory, --time, --gpus, --queue and --account give "
        "the new attempt other needs."),
    'reconcile': ('dunscaith.entrypoints.dunscaith.commands.requests',
        'Carry on what an exit 5 left outstanding (escalations to deliver, objects stopping), or supervise a '
        'job with no outcome yet: for at most supervise.wait (300 s unless set), then exit 5 with what is left; '
        'with a live supervisor, say so (it carries it on).'),
    'prune': ('dunscaith.entrypoints.dunscaith.commands.requests',
        'Let settled jobs go for good: their records are kept, their pointers removed, and sweeps stop any '
        'object of their names that has not started.'),
    'check': ('dunscaith.entrypoints.dunscaith.commands.check',
        'Check a cluster before submitting to it: its controller answers, it keeps accounting, and it makes and '
        'cancels a held object of a test name (never started); one line each, in a few seconds.'),
    'doctor': ('dunscaith.entrypoints.dunscaith.commands.doctor',
        'Check the store (that it opens, its integrity), every record, every pointer and residual entry.'),
    'config': ('dunscaith.entrypoints.dunscaith.commands.config',
        'The configuration: where it is read from, and what is in effect.'),
}


def register_module(app: typer.Typer, module: str) -> None:
    """Register the commands of one module onto ``app`` (each module's own ``register``)."""
    found: Any = importlib.import_module(module)
    found.register(app)


class LazyCommands(TyperGroup):
    """The root group: the lazy commands after the eager ones (``remote``), loaded on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*LAZY, *(name for name in super().list_commands(ctx) if name not in LAZY)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY:
            self._load(LAZY[cmd_name][0])
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                           list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.UsageError as exc:
            # typer suggests among the commands loaded so far; the lazy ones are not, yet
            if args and "Did you mean" not in exc.message:
                known = [name for name in self.list_commands(ctx) if not name.startswith("_")]
                found = get_close_matches(args[0], known, n=2)
                if found:
                    # typer's own wording, as for the commands of a group loaded whole (config, remote)
                    exc.message = f"{exc.message.rstrip('.')}. Did you mean {', '.join(repr(f) for f in found)}?"
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: list[tuple[str, click.Command | None]] = []
        for name in self.list_commands(ctx):
            if name in self.commands or name not in LAZY:
                cmd = self.get_command(ctx, name)
                if cmd is None or cmd.hidden:
                    continue
                rows.append((name, cmd))
            else:
                rows.append((name, None))
        if not rows:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        listed = [(name, cmd.get_short_help_str(limit) if cmd is not None
                   else make_default_short_help(LAZY[name][1], limit)) for name, cmd in rows]
        with formatter.section("Commands"):
            formatter.write_dl(listed)

    def _load(self, module: str) -> None:
        from dunscaith.entrypoints.cli_support import finish_help, new_app
        from dunscaith.entrypoints.dunscaith.help_text import EPILOGS, EXAMPLES, EXIT_CODES

        holder = new_app("")
        register_module(holder, module)
        finish_help(holder, EXAMPLES, EXIT_CODES, EPILOGS)
        for name, cmd in typer.main.get_group(holder).commands.items():
            self.commands.setdefault(name, cmd)
