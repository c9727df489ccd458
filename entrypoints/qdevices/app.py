"""The ``qdevices`` console script: live runs of metered quantum jobs.

Commands parse, call a use case, render, and map its outcome to an exit code. Every line printed
passes the redaction filter, which learns the token the moment it is read.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import typer

from dunscaith.entrypoints.cli_support import BadInput, finish_help, home_missing, new_app, run, version_flag
from dunscaith.entrypoints.path_args import path_arg
from dunscaith.entrypoints.qdevices.output import SafePrinter
from dunscaith.entrypoints.qdevices.secrets import SECRETS

# The container (every site adapter, httpx, dependency-injector) and the settings (pydantic) are imported
# by the command that uses them, never for --help or a usage error.
# The manifest parser, the send use case, the orders and the resolve table likewise: each command imports
# what it uses.
# So are the site table and the redaction filter: --help needs neither.
if TYPE_CHECKING:
    from dunscaith.domain.model.qdevices.manifest import Manifest
    from dunscaith.domain.model.qdevices.orders import RunView
    from dunscaith.domain.model.qdevices.sites import SiteName
    from dunscaith.domain.services.qdevices.send import SendOutcome, SendRequest, UnderWay
    from dunscaith.entrypoints.qdevices.root.container import Container, UseCases
    from dunscaith.entrypoints.qdevices.root.settings import QdevicesSettings

app: typer.Typer = new_app("Send orders to quantum computing sites: never twice, never cancelled, always in a record."
                           "\n\nNew here? Start with docs/qdevices/quick-start.md: a manifest, a dry run, "
                           "check --live, a first live run, a resume, jobs, budget.", "qdevices")


OUT = SafePrinter(SECRETS.clean)
T = TypeVar("T")


def _config(settings: QdevicesSettings) -> dict[str, Any]:
    return {"records": str(settings.records), "poll_seconds": settings.poll_seconds,
            "piastq_format": settings.piastq.program_format.value}


def make_container(settings: QdevicesSettings | None = None) -> Container:
    from dunscaith.entrypoints.qdevices.root.container import Container

    container = Container()
    if settings is not None:
        container.config.from_dict(_config(settings))
    return container


_ARGV: list[str] = []  # the command line main was given: a request for help is answered without a home


@app.callback()
def _main(ctx: typer.Context, version: bool = version_flag("qdevices")) -> None:
    from dunscaith.entrypoints.qdevices.root.settings import load_settings

    home_missing(_ARGV)  # the configuration, records and site locks are in it, and it is never made
    settings = load_settings()
    container = ctx.obj if ctx.obj is not None else make_container()  # tests give theirs through run(obj=)
    container.config.from_dict(_config(settings))
    ctx.obj = (container, settings)


def _ctx(ctx: typer.Context) -> tuple[Container, UseCases, QdevicesSettings]:
    container: Container = ctx.obj[0]
    settings: QdevicesSettings = ctx.obj[1]
    return container, container.use_cases.container, settings


def _live(ctx: typer.Context, site: SiteName, token: str, project: str | None = None,
          rules: Path | None = None) -> None:
    """What this call's site adapter is built with, and the rules file its use case gets: the container
    builds both when the use case is made, and closes the site when the command ends."""
    container: Container = ctx.obj[0]
    container.config.live.from_dict({"site": site.value, "token": token, "project": project,
                                     "rules": str(rules) if rules is not None else None})
    ctx.call_on_close(container.shutdown_resources)


class _Handlers(Protocol):
    """The command's signal handlers: installed first, restored last."""

    def install(self) -> object: ...

    def restore(self) -> None: ...


def _interrupts(ctx: typer.Context) -> _Handlers:
    """The command's signal handling, the one adapter a command touches itself: installed before anything
    else and restored last, around the use case that waits on it (the container gives it the same one)."""
    container: Container = ctx.obj[0]
    handlers: _Handlers = container.adapters.interrupts()
    return handlers


# --- manifests ----------------------------------------------------------------------------------------
def load_manifest(path: Path, use_cases: UseCases) -> tuple[Manifest, dict[int, str]]:
    """The manifest and each order's program (OpenQASM, or for Piast-Q the AQT circuit made from it)."""
    import tomllib

    from dunscaith.domain.model.qdevices.manifest import (
        MAX_CIRCUIT_BYTES,
        MAX_MANIFEST_BYTES,
        ManifestError,
        parse_manifest,
    )

    try:
        data = tomllib.loads(_read_input(use_cases, path, MAX_MANIFEST_BYTES))
    except FileNotFoundError:
        raise BadInput(f"{path}: no such manifest") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: cannot be read ({_why(exc)})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path}: not TOML ({exc})") from None
    try:
        manifest = parse_manifest(data, path.stem)
        circuits: dict[int, str] = {}
        for order in manifest.orders:
            circuit_path = (path.parent / order.circuit).resolve()
            where = f"order {order.index} ({order.name}) circuit {order.circuit}"
            try:
                text = _read_input(use_cases, circuit_path, MAX_CIRCUIT_BYTES)
            except (OSError, UnicodeDecodeError) as exc:
                raise ManifestError(f"{where}: cannot be read ({_why(exc)})") from None
            circuits[order.index] = text
        programs = use_cases.programs()(manifest, circuits)
    except ManifestError as exc:
        raise BadInput(f"{path}: {exc}") from None
    return manifest, programs


def _read_input(use_cases: UseCases, path: Path, limit: int) -> str:
    """A file the user names (a manifest, a circuit) as text: a regular file of at most ``limit`` bytes,
    else OSError (a FIFO or /dev/zero is refused unread: InputRefused); UnicodeDecodeError when not UTF-8."""
    text: str = use_cases.read_input()(path, limit)
    return text


def _why(exc: OSError | UnicodeDecodeError) -> str:
    """Why a named file cannot be read, without its path again (the line names it already)."""
    return str(getattr(exc, "strerror", None) or exc)


def take_token(site: SiteName) -> str:
    """Read the site's token once, then delete every token variable from the environment, before a
    rules file is imported."""
    from dunscaith.domain.model.qdevices.redaction import MIN_SECRET_LENGTH, too_short
    from dunscaith.domain.model.qdevices.sites import TOKEN_VARIABLES, TRAITS

    variable = TRAITS[site].token_variable
    token = os.environ.get(variable, "")
    for name in TOKEN_VARIABLES:
        os.environ.pop(name, None)
    if token and too_short(token):
        raise BadInput(f"{variable} is shorter than {MIN_SECRET_LENGTH} characters: a token that short is also a "
                       "word of the record, and the filter that keeps it out would rewrite the record; check it")
    if token:
        SECRETS.add(token)
    return token


def _absolute(path: Path) -> str:
    """Absolute, without following a symbolic link of its last name: the record store refuses one."""
    return os.path.abspath(path)


def _not_checked(site: SiteName) -> str:
    from dunscaith.domain.model.qdevices.sites import SiteName

    vlq = ", the LEXIS project, its VLQ resource and HEAppE templates" if site is SiteName.VLQ else ""
    return f"needs --live: whether {site.value} takes the token, the device{vlq}"


def _resume_line(manifest: Path, record: str | None, max_order: int | None = None) -> str:
    sends = f" --max-order {max_order}" if max_order is not None else ""
    return f"Resume with: qdevices send {manifest} --live --resume {record}{sends}"


def _under_way_line(under: UnderWay | None) -> str | None:
    if under is None:
        return None
    job = under.job if under.job is not None else "not known (no answer came)"
    return f"Under way at the stop: order {under.order} ({under.name}), {under.kind} {job}"


# --- send ---------------------------------------------------------------------------------------------
@app.command("send")
def send(
    ctx: typer.Context,
    manifest: Path = typer.Argument(..., help="the run's manifest (TOML)", metavar="MANIFEST",
                                   parser=path_arg),
    live: bool = typer.Option(False, "--live", help="send for real; without it, a dry run that sends nothing"),
    resume: Path | None = typer.Option(None, "--resume", help="collect (and with --max-order, send) on RECORD",
                                       parser=path_arg, metavar="RECORD"),
    max_order: int | None = typer.Option(None, "--max-order", min=1, help="send only orders 1 to N", metavar="N"),
) -> int:
    """Send the orders of MANIFEST (a dry run unless --live).

    RECORD is the file a live run prints after "Record:", under the records folder:
    ~/.local/share/qdevices/records/SITE/RUN/ by default (the records setting moves it)."""
    from dunscaith.domain.model.qdevices.sites import TRAITS
    from dunscaith.domain.services.qdevices.errors import CallRefused
    from dunscaith.domain.services.qdevices.send import ProgramStopped, RecordWriteStopped, SendRequest
    from dunscaith.ports.run_record import RecordUnreadable, RecordWriteFailed
    from dunscaith.ports.site_lock import SiteLockRefused

    _, use_cases, settings = _ctx(ctx)
    interrupts = _interrupts(ctx)
    if live:
        # From here a signal is a stop line, never a traceback; nothing has been sent yet.
        interrupts.install()
    m, circuits = load_manifest(manifest, use_cases)
    if max_order is not None and max_order > len(m.orders):
        raise BadInput(f"--max-order {max_order}: {manifest} has {len(m.orders)} order(s)")
    all_older = {site: tuple(entries) for site, entries in settings.older_records().items()}
    req = SendRequest(m, str(manifest.resolve()), circuits, _absolute(resume) if resume else None, max_order,
                      all_older[m.site.value], "", os.getpid(), all_older)
    # Every token variable leaves the environment before the rules file is imported, dry run or not.
    token = take_token(m.site)
    _live(ctx, m.site, token, m.project, (manifest.parent / m.rules).resolve() if m.rules else None)
    if not live:
        if resume is not None:
            raise BadInput("--resume needs --live (a dry run sends nothing and resumes nothing)")
        return _dry_run(use_cases, req, bool(token))
    if not token:
        raise BadInput(f"{TRAITS[m.site].token_variable} is not set: export it (set +x; export "
                       f"{TRAITS[m.site].token_variable}=\"$(cat FILE)\")")
    try:
        service = _made(lambda: use_cases.send(reporter=OUT))  # the rules file imported, the site opened
        outcome = service.live(req)
    except (CallRefused, SiteLockRefused, RecordUnreadable) as exc:
        raise BadInput(str(exc)) from None
    except RecordWriteStopped as exc:
        under = exc.under_way
        what = (f"order {under.order} ({under.name}), {under.kind} {under.job or 'not known'}" if under
                else "no order under way")
        OUT.warn(f"RECORD WRITE FAILED ({exc.detail}): {what}: write this id down; when `qdevices jobs RECORD` "
                 "shows the order as lost, give it with qdevices resolve RECORD ORDER --job ID")
        return 3
    except RecordWriteFailed as exc:  # the first line of a new record: nothing was sent
        raise BadInput(f"the record cannot be written: {exc}") from None
    except ProgramStopped as exc:
        line = _under_way_line(exc.under_way)
        if line:
            OUT.warn(line)
        if exc.record:
            OUT.warn(_resume_line(manifest, exc.record))
        raise exc.__cause__ or exc from None
    finally:
        interrupts.restore()
    return _render_outcome(manifest, outcome, max_order or len(m.orders))


def _render_outcome(manifest: Path, outcome: SendOutcome, limit: int) -> int:
    from dunscaith.domain.model.qdevices.exits import StopReason

    if outcome.stop is not None:
        OUT.warn(f"Stopped ({outcome.stop.value}): {outcome.detail}")
    elif outcome.detail:
        OUT.warn(outcome.detail)
    if outcome.exit != 0 and outcome.record:
        # an order not sent is sent by a resume with --max-order; a plain resume only collects
        OUT.warn(_resume_line(manifest, outcome.record, limit if outcome.stop is StopReason.NOT_SENT else None))
        line = _under_way_line(outcome.under_way)
        if line:
            OUT.warn(line)
    elif outcome.record:
        OUT.say(f"Done: {outcome.record}")
    return outcome.exit


def _made(make: Callable[[], T]) -> T:
    """A use case made by the container, which imports the rules file it gets: one that cannot be used is
    bad input, said in one line."""
    from dunscaith.ports.run_io import RulesUnusable

    try:
        return make()
    except RulesUnusable as exc:
        raise BadInput(str(exc)) from None


def _dry_run(use_cases: UseCases, req: SendRequest, token_set: bool) -> int:
    from dunscaith.domain.model.qdevices.sites import TRAITS
    from dunscaith.domain.services.qdevices.errors import CallRefused
    from dunscaith.ports.run_record import RecordUnreadable

    service = _made(lambda: use_cases.plan(reporter=OUT))  # the rules file imported (checked), no site
    try:
        plan = service.plan(req)
    except (CallRefused, RecordUnreadable) as exc:
        raise BadInput(str(exc)) from None
    m = req.manifest
    OUT.say(f"Dry run: nothing is sent. Site {m.site.value}, device {m.device}, run {m.run}.")
    for order in plan.orders:
        OUT.say(f"  order {order.index} ({order.name}): {order.shots} shots, circuit {order.circuit}")
    OUT.say(f"Budget bound of {m.site.value}: {plan.bound_now:g} s now, {plan.bound_planned:g} s if every planned "
            f"order takes job_seconds_limit {m.limits.job_seconds_limit} s; budget_seconds {plan.budget}.")
    for blocker in plan.blockers:
        OUT.say(f"Blocks a live run: {blocker}")
    if plan.stop is not None:
        spec = plan.stop.order
        worst = ", if every order before it takes job_seconds_limit" if spec.index > plan.orders[0].index else ""
        OUT.say(f"A live run would stop ({plan.stop.reason.value}) before order {spec.index} ({spec.name}){worst}: "
                f"{plan.stop.detail}")
    variable = TRAITS[m.site].token_variable
    rules = ", the rules file (imported)" if m.rules else ""
    OUT.say(f"Checked: the manifest and its circuits, every record of {m.site.value} (budget bound, lost and open "
            f"orders){rules}; {variable} is {'set' if token_set else 'not set (a live run needs it)'}. "
            f"Not checked, {_not_checked(m.site)}.")
    return plan.exit  # as the live run would: 2 while an order blocks it, 1 when a rule would stop it


# --- jobs ---------------------------------------------------------------------------------------------
def _order_rows(view: RunView) -> list[dict[str, Any]]:
    from dunscaith.domain.model.qdevices.blocking import blocks

    rows = []
    for o in view.orders:
        rows.append({"order": o.index, "name": o.name, "state": o.state.value, "job": o.job,
                     "outcome": o.outcome.value if o.outcome else None, "seconds": o.seconds,
                     "resolution": o.resolution, "counts_at_limit": o.counts_at_limit, "last_stop": o.last_stop,
                     "blocks": blocks(view, o)})
    return rows


@app.command("jobs")
def jobs(ctx: typer.Context, record: Path = typer.Argument(..., metavar="RECORD", parser=path_arg),
         as_json: bool = typer.Option(False, "--json", help="one JSON object a line")
         ) -> int:
    """Show the orders of a record, what each counts in the budget bound, and the site's budget."""
    from dunscaith.domain.model.qdevices.budget import charge
    from dunscaith.domain.services.qdevices.errors import CallRefused

    _, use_cases, settings = _ctx(ctx)
    try:
        listing = use_cases.jobs()(str(record))
    except CallRefused as exc:
        raise BadInput(str(exc)) from None
    if listing.torn_tail:
        OUT.warn(f"{listing.path}: the last line was cut by a crash mid-write; the rest reads")
    view = listing.view
    rows = _order_rows(view)
    code = _jobs_exit(view)
    if as_json:
        for row in rows:
            OUT.say(json.dumps(row, sort_keys=True))
        return code
    OUT.say(f"{listing.path}: site {view.site}, device {view.site_device}, run {view.run}")
    table = [("ORDER", "NAME", "STATE", "JOB", "SECONDS", "COUNTED", "NOTE")]
    for row, order in zip(rows, view.orders, strict=True):
        note = [row["outcome"]] if row["outcome"] else []
        if row["resolution"]:
            note.append(f"resolved --{row['resolution'].replace('_', '-')}")
        if row["last_stop"] and row["state"] != "final":
            note.append(f"last stop {row['last_stop']}")
        seconds = f"{row['seconds']:g}" if row["seconds"] is not None else "-"
        table.append((str(row["order"]), row["name"], row["state"], _cut(row["job"] or "-", 24), seconds,
                      f"{charge(order, view.job_seconds_limit):g}", ", ".join(note)))
    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]) - 1)]
    for number, line in enumerate(table):
        cells = [cell.rjust(width) if i in (0, 4, 5) else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(line[:-1], widths, strict=True))]
        OUT.say(f"  {'  '.join(cells)}  {line[-1]}".rstrip())
        blocked = rows[number - 1]["blocks"] if number else None
        if blocked:
            OUT.say(f"      {blocked}")
    OUT.say(_budget_footer(use_cases, settings, view.site, view.manifest))
    return code


def _jobs_exit(view: RunView) -> int:
    """The record's state in the numbers send uses: 0 every order final, 1 one open or not sent yet,
    2 one lost (a job may exist, and a person must resolve it)."""
    from dunscaith.domain.model.qdevices.orders import OrderState

    states = {o.state for o in view.orders}
    if OrderState.LOST in states:
        return 2
    return 0 if states <= {OrderState.FINAL} else 1


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _budget_seconds(manifest: Path, use_cases: UseCases) -> int:
    """``limits.budget_seconds`` of a manifest, or BadInput naming why it cannot be read."""
    import tomllib

    from dunscaith.domain.model.qdevices.manifest import MAX_MANIFEST_BYTES

    try:
        limits = tomllib.loads(_read_input(use_cases, manifest, MAX_MANIFEST_BYTES)).get("limits", {})
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{manifest}: cannot be read as a manifest ({_why(exc)})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{manifest}: cannot be read as a manifest ({exc})") from None
    seconds = limits.get("budget_seconds") if isinstance(limits, dict) else None
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise BadInput(f"{manifest}: no whole limits.budget_seconds")
    return seconds


def _budget_footer(use_cases: UseCases, settings: QdevicesSettings, site: str, manifest: str) -> str:
    """The site's budget under a record's orders; never fails the listing (the figures are display)."""
    from dunscaith.domain.services.qdevices.errors import CallRefused

    try:
        budget_seconds: int | None = _budget_seconds(Path(manifest), use_cases) if manifest else None
        why = ""
    except BadInput as exc:
        budget_seconds, why = None, str(exc)
    try:
        figures = use_cases.budget()(site, settings.older_records().get(site, []), budget_seconds)
    except CallRefused as exc:
        return f"budget of {site}: not shown: {exc}"
    left = f"left {figures.left:g} s of budget_seconds {figures.budget}" if figures.left is not None else \
        f"left not known ({why or 'the record names no manifest'}: see qdevices budget {site} --budget N)"
    return (f"budget of {site}, {len(figures.records)} record(s): used {figures.used:g} s, bound {figures.bound:g} s "
            f"({figures.at_limit:g} s counted at job_seconds_limit); {left}")


# --- budget -------------------------------------------------------------------------------------------
@app.command("budget")
def budget(
    ctx: typer.Context,
    site_name: str = typer.Argument(..., metavar="SITE", help="mqss, vlq or piastq"),
    seconds: int | None = typer.Option(None, "--budget", min=0, help="the budget_seconds to measure against"),
    manifest: Path | None = typer.Option(None, "--manifest", help="take budget_seconds from this manifest",
                                         parser=path_arg),
    as_json: bool = typer.Option(False, "--json", help="one JSON object"),
) -> int:
    """Where SITE's budget stands: device seconds used, seconds counted at job_seconds_limit, the bound."""
    from dunscaith.domain.model.qdevices.sites import parse_site
    from dunscaith.domain.services.qdevices.errors import CallRefused

    try:
        site = parse_site(site_name)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if seconds is not None and manifest is not None:
        raise BadInput("give --budget or --manifest, not both")
    _, use_cases, settings = _ctx(ctx)
    if manifest is not None:
        seconds = _budget_seconds(manifest, use_cases)
    try:
        figures = use_cases.budget()(site.value, settings.older_records()[site.value], seconds)
    except CallRefused as exc:
        raise BadInput(str(exc)) from None
    if as_json:
        OUT.say(json.dumps({"site": figures.site, "used": figures.used, "at_limit": figures.at_limit,
                            "bound": figures.bound, "budget": figures.budget, "left": figures.left,
                            "records": [{"path": r.path, "own": r.own, "used": r.used, "at_limit": r.at_limit,
                                         "bound": r.bound, "lost": r.lost, "open": r.open}
                                        for r in figures.records]}, sort_keys=True))
        return 0
    own = sum(r.own for r in figures.records)
    OUT.say(f"{figures.site}: {len(figures.records)} record(s) read ({own} of qdevices, "
            f"{len(figures.records) - own} in older_records)")
    for record in figures.records:
        held = f", {record.lost} lost, {record.open} open" if record.lost or record.open else ""
        OUT.say(f"  {record.path}: {record.used:g} s used, {record.at_limit:g} s at the limit{held}")
    OUT.say(f"used (device seconds the site measured): {figures.used:g} s")
    OUT.say(f"counted at job_seconds_limit (lost, open, no measured time): {figures.at_limit:g} s")
    OUT.say(f"bound: {figures.bound:g} s")
    if figures.left is None:
        OUT.say("left: give --budget SECONDS or --manifest MANIFEST (its limits.budget_seconds)")
    else:
        OUT.say(f"budget_seconds {figures.budget}: left {figures.left:g} s")
    return 0


# --- resolve ------------------------------------------------------------------------------------------
@app.command("resolve")
def resolve(
    ctx: typer.Context,
    record: Path = typer.Argument(..., metavar="RECORD", parser=path_arg),
    order: str = typer.Argument(..., help="the order's number or name"),
    job: str | None = typer.Option(None, "--job", help="the job id found at the site"),
    none: bool = typer.Option(False, "--none", help="no job ran (or, where the table says, it counts at the limit)"),
    expired: bool = typer.Option(False, "--expired", help="Piast-Q: the result expired"),
    over_limit: bool = typer.Option(False, "--over-limit", help="the result's time was a wait at the site"),
    gone: bool = typer.Option(False, "--gone", help="another runner's open order whose job the site no longer gives"),
) -> int:
    """Record a decision on one order, offline, in one synced line."""
    from dunscaith.domain.model.qdevices.resolve import Option
    from dunscaith.domain.services.qdevices.errors import CallRefused
    from dunscaith.ports.run_record import RecordUnreadable, RecordWriteFailed
    from dunscaith.ports.site_lock import SiteLockRefused

    chosen = [o for o, given in ((Option.JOB, job is not None), (Option.NONE, none), (Option.EXPIRED, expired),
                                 (Option.OVER_LIMIT, over_limit), (Option.GONE, gone)) if given]
    if len(chosen) != 1:
        raise BadInput("give exactly one of --job ID, --none, --expired, --over-limit, --gone")
    _, use_cases, settings = _ctx(ctx)
    service = use_cases.resolve(older_records=settings.older_records())
    try:
        done = service(str(record), order, chosen[0], job)
    except (CallRefused, SiteLockRefused, RecordUnreadable, RecordWriteFailed) as exc:
        raise BadInput(str(exc)) from None
    d = done.decision
    where = "" if done.own_record else f" (in older_decisions.jsonl of {done.site})"
    then = "a resume collects it" if not d.final else (
        "final, counts at job_seconds_limit" if d.counts_at_limit else "final, with no job")
    OUT.say(f"order {done.order} ({done.name}): --{d.option.value.replace('_', '-')} recorded{where}; {then}")
    return 0


# --- unlock, check ------------------------------------------------------------------------------------
@app.command("unlock")
def unlock(ctx: typer.Context, site: str, host: str = typer.Option(..., "--host", help="the holder's host name")
           ) -> int:
    """Clear the site lock's holder file left by HOST (check that host first)."""
    from dunscaith.domain.model.qdevices.sites import SiteName
    from dunscaith.domain.services.qdevices.errors import CallRefused
    from dunscaith.ports.site_lock import SiteLockRefused

    _, use_cases, _ = _ctx(ctx)
    try:
        holder = use_cases.unlock()(SiteName(site).value, host)
    except ValueError:
        raise BadInput(f"unknown site {site!r}") from None
    except (CallRefused, SiteLockRefused) as exc:
        raise BadInput(str(exc)) from None
    if holder is None:
        OUT.say(f"{site}: no holder file; nothing to clear")
    else:
        OUT.say(f"{site}: cleared the holder pid {holder.pid} of {holder.host} (since {holder.started})")
    return 0


@app.command("check")
def check(
    ctx: typer.Context,
    live: bool = typer.Option(False, "--live", help="ask the site (takes the site lock; makes no job)"),
    site_name: str | None = typer.Option(None, "--site", help="the site to check (default: the manifest's, or mqss)"),
    device: str = typer.Option("", "--device", help="a device the site should know"),
    project: str | None = typer.Option(None, "--project", help="VLQ: the LEXIS project (short name)"),
    manifest: Path | None = typer.Option(None, "--manifest", metavar="MANIFEST", parser=path_arg,
                                         help="also check a run's manifest and make each order's program "
                                              "(Piast-Q: the AQT circuit); its site, device and project by default"),
) -> int:
    """Check the configuration and the token variable; with --live, ask the site whether it takes the token."""
    from dunscaith.domain.model.qdevices.redaction import MIN_SECRET_LENGTH, too_short
    from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName
    from dunscaith.ports.site_lock import SiteLockRefused

    _, use_cases, settings = _ctx(ctx)
    run_manifest = load_manifest(manifest, use_cases)[0] if manifest is not None else None
    if run_manifest is not None:
        if site_name is not None and site_name != run_manifest.site.value:
            raise BadInput(f"--site {site_name}: {manifest} is for site {run_manifest.site.value}")
        site_name = run_manifest.site.value
        device = device or run_manifest.device
        project = project if project is not None else run_manifest.project
        OUT.say(f"{manifest}: {len(run_manifest.orders)} order(s), each program made and checked")
    try:
        site_id = SiteName(site_name or "mqss")
    except ValueError:
        raise BadInput(f"unknown site {site_name!r}") from None
    variable = TRAITS[site_id].token_variable
    if project is not None and site_id is not SiteName.VLQ:
        raise BadInput(f"--project is for site vlq only, not {site_id.value}")
    OUT.say(f"records: {settings.records}")
    if not live:
        value = os.environ.get(variable, "")
        if not value:
            raise BadInput(f"{site_id.value}: {variable} is not set: export it "
                           f"(set +x; export {variable}=\"$(cat FILE)\")")
        if too_short(value):
            raise BadInput(f"{site_id.value}: {variable} is shorter than {MIN_SECRET_LENGTH} characters: check it")
        OUT.say(f"{site_id.value}: {variable} is set")
        OUT.say(f"Checked: the configuration, {variable}. Not checked, {_not_checked(site_id)}.")
        return 0
    if site_id is SiteName.VLQ and not project:
        raise BadInput("check --live --site vlq needs --project (the LEXIS project short name)")
    token = take_token(site_id)
    if not token:
        raise BadInput(f"{variable} is not set")
    _live(ctx, site_id, token, project)
    try:
        answer = use_cases.check()(device)
    except SiteLockRefused as exc:
        raise BadInput(str(exc)) from None
    OUT.say(f"{site_id.value}: {answer.kind.value}: {answer.detail}")
    return {"ok": 0, "refused": 2}.get(answer.kind.value, 1)


_PROGRAM = "3 an error of the program"
finish_help(app, {
    "send": ["qdevices send run.toml", "qdevices send run.toml --live --max-order 1",
             "qdevices send run.toml --live --resume RECORD --max-order 2",
             "qdevices send run.toml --live --resume RECORD"],
    "jobs": ["qdevices jobs RECORD", "qdevices jobs RECORD --json"],
    "resolve": ["qdevices resolve RECORD 1 --job ID", "qdevices resolve RECORD 1 --none"],
    "unlock": ["qdevices unlock mqss --host login2"],
    "check": ["qdevices check", "qdevices check --live --device Q5", "qdevices check --site vlq",
              "qdevices check --manifest run.toml"],
    "budget": ["qdevices budget mqss", "qdevices budget mqss --manifest run.toml", "qdevices budget mqss --json"],
}, f"Exit codes: 0 done; 2 bad input or a refused call; {_PROGRAM}. See docs/qdevices/live-runs.md.", {
    "send": "Exit codes: 0 every order asked for is final; 1 an order stays open or not sent, or a rule stopped the "
            f"run; 2 a stop unknown (a job may exist), a lost order, or bad input or a refused call; {_PROGRAM}; "
            "128+n ended by signal n. See docs/qdevices/live-runs.md.",
    "jobs": "Exit codes: 0 every order of the record is final; 1 an order is open or not sent yet; 2 an order is "
            f"lost (resolve it), or bad input (no such record, a damaged one); {_PROGRAM}. "
            "See docs/qdevices/live-runs.md.",
    "resolve": "Exit codes: 0 the decision is recorded; 2 bad input, or a decision the table does not take, or the "
               f"site lock held; {_PROGRAM}. See docs/qdevices/resolve.md.",
    "unlock": "Exit codes: 0 the holder file is cleared, or there is none; 2 bad input (an unknown site, a name "
              f"that is not a host name), or the holder is another host or still runs; {_PROGRAM}. "
              "See docs/qdevices/live-runs.md.",
    "check": "Exit codes: 0 checked (with --live: the site takes the token); 1 with --live, no good answer from "
             "the site; 2 bad input (the token variable unset or too short), or with --live the token refused; "
             f"{_PROGRAM}. See docs/qdevices/tokens.md.",
    "budget": "Exit codes: 0 the figures are shown; 2 bad input (an unknown site, a manifest without a whole "
              "budget_seconds), or a record of the site that cannot be read (the bound is never made from part of "
              f"them); {_PROGRAM}. See docs/qdevices/budget-and-rules.md.",
})


def main(argv: list[str] | None = None, container: Container | None = None) -> None:
    _ARGV[:] = sys.argv[1:] if argv is None else argv
    run(app, "qdevices", argv, redact=SECRETS.clean, obj=container)
