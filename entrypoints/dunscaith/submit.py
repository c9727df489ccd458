"""``dunscaith submit / supervise``: record a job and supervise it, or reattach a supervisor."""

from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperCommand

from domain.model.jobs.ids import JobId
from domain.model.jobs.spec import BadSpec, JobSpec
from domain.services.jobs.submit import check_name
from entrypoints.cli_support import BadInput
from entrypoints.dunscaith import edge, supervision
from entrypoints.dunscaith.render import EXIT_CODES
from ports.job_store import JobExists

if TYPE_CHECKING:
    from typer._click.core import Context as ParsingContext  # what typer's own click passes to parse_args

_AS_COMMAND = "dunscaith.as_command"


class _WordsCommand(TyperCommand):
    """Notes whether the words were given after ``--``: only that tells a COMMAND from a SCRIPT, and
    parsing drops it."""

    def parse_args(self, ctx: ParsingContext, args: list[str]) -> list[str]:
        ctx.meta[_AS_COMMAND] = "--" in args
        return super().parse_args(ctx, args)


def _default_name(words: list[str]) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in Path(words[0]).name)[:24].strip("-._")
    return f"{stem or 'job'}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _spec(ctx: typer.Context, words: list[str], name: str | None, cluster_name: str) -> JobSpec:
    settings = edge.settings(ctx)
    cluster = settings.cluster(cluster_name)
    if not words:
        raise BadInput("nothing to run: give a command after -- (submit -- sh -c 'echo hi') or a script")
    script: str | None = None
    command: tuple[str, ...] = ()
    if ctx.meta.get(_AS_COMMAND, False):
        command = tuple(words)
    else:
        if len(words) != 1:
            raise BadInput("give one SCRIPT, or put the command after -- (submit -- COMMAND ARGS...)")
        try:
            script = Path(words[0]).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise BadInput(f"script {words[0]}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        job = check_name(name if name is not None else _default_name(words))
        return JobSpec(job, cluster_name, cluster.adapter, command, script, os.getcwd(),
                       settings.recovery.attempts)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None


def submit(
    ctx: typer.Context,
    words: list[str] = typer.Argument(None, metavar="(-- COMMAND... | SCRIPT)"),
    cluster: str = typer.Option("local", "--cluster", help="a [clusters.NAME] of the configuration"),
    name: str | None = typer.Option(None, "--name", help="the job's name (default: from the command)"),
) -> int:
    """Record a job, create it held, release it once it is known, and supervise it to its outcome."""
    drain = edge.interrupts(ctx)
    spec = _spec(ctx, words or [], name, cluster)
    edge.open_store(ctx)
    edge.notice_unattended(ctx)
    try:
        job = edge.use_cases(ctx).record_job()(spec)
    except JobExists:
        raise BadInput(f"a job named {spec.name} is already recorded; choose another --name") from None
    return supervision.supervise(ctx, job, drain, fresh=True)


def supervise(ctx: typer.Context, job: str = typer.Argument(..., metavar="JOB")) -> int:
    """Reattach a supervisor to a job (refused while another supervisor holds it)."""
    edge.owned_elsewhere(ctx, job, ["supervise", job])  # another host's job: supervised there, in the foreground
    drain = edge.interrupts(ctx)
    edge.open_store(ctx)
    edge.notice_unattended(ctx, skip=job)
    return supervision.supervise(ctx, JobId(job), drain, fresh=False)


def register(app: typer.Typer) -> None:
    settings: dict[str, Any] = {"allow_interspersed_args": False}
    app.command("submit", cls=_WordsCommand, context_settings=settings, epilog=EXIT_CODES)(submit)
    app.command("supervise", epilog=EXIT_CODES)(supervise)
