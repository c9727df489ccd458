"""``dunscaith status`` and ``list``: what the records say, and whether a supervisor watches each job.

The commands' bodies: the typer commands (``commands/status.py``) declare the arguments and call these
with the use cases they are given.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from difflib import get_close_matches
from typing import TYPE_CHECKING, Any, NamedTuple

from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_status
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.residual import ResidualReason
from dunscaith.domain.model.jobs.summary import SummaryQuery, state_words
from dunscaith.domain.model.jobs.sweep_counts import counts_words
from dunscaith.domain.model.shown import escaped, reason
from dunscaith.domain.model.shown import shown as quoted
from dunscaith.domain.services.jobs.listing import Covered, PipelineRow, SweepRow, Unreadable
from dunscaith.domain.services.jobs.pointer_survey import PointedSweep, PointerSurvey, by_sweep
from dunscaith.domain.services.jobs.status import JobView
from dunscaith.domain.services.jobs.sweep_members import NotASweep
from dunscaith.domain.services.jobs.sweep_status import SweepStanding
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, render, sweep_render, table
from dunscaith.entrypoints.dunscaith.edge import PROG, At
from dunscaith.ports.job_store import RecordDamaged, UnknownJob

if TYPE_CHECKING:
    from dunscaith.domain.model.jobs.residual import ResidualEntry
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.services.jobs.listing import JobListing
    from dunscaith.domain.services.jobs.pipeline_status import PipelineStanding
    from dunscaith.domain.services.jobs.status import JobStatus
    from dunscaith.domain.services.jobs.sweep import SweepReport
    from dunscaith.domain.services.jobs.sweep_status import SweepStatus

DEFAULT_LINES = 54  # when the output is no terminal: 50 jobs


class Reads(NamedTuple):
    """The use cases status and list are given (each a maker: made when first called), by the typer
    commands (``@edge.injected``)."""

    status: Callable[[], JobStatus]
    sweep_status: Callable[[], SweepStatus]
    listing: Callable[[], JobListing]


def status(at: At, reads: Reads, job: str | None, as_json: bool, state: str | None) -> int:
    """``status [JOB] [--json] [--state STATE]`` (not ``--watch``: commands/watch.py)."""
    if job is None:
        return list_jobs(at, reads.listing, as_json, False, False, state, None, None, None, None, False, False)
    if state is not None:
        _known_state(state)
    words = ["status", job, *(["--state", state] if state is not None else []), *(["--json"] if as_json else [])]
    edge.owned_elsewhere(at, job, words, follow=True, sweeps=True)
    edge.open_store(at)
    if state is not None:
        return _sweep_status(at, _chosen_elements(at, reads.sweep_status, job, state, words), as_json)
    view = _job_or_sweep(at, reads, job, words)
    if not isinstance(view, JobView | SweepStanding):  # a pipeline's name
        with edge.store_errors(at, job):
            return _pipeline_status(at, view, as_json)
    if isinstance(view, SweepStanding):
        with edge.store_errors(at, job):  # the sweep of that name is shown under the store's refusals, as read
            return _sweep_status(at, view, as_json)
    _own_pointer(at, job)
    edge.notice_unattended(at, skip=job)
    edge.sweep(at)
    now = reads.listing().now()
    if as_json:
        print(json.dumps(_status_json(view, now), indent=2))
    else:
        _status_lines(view, now, job)
    return for_status(view.state.outcome)


def _chosen_elements(at: At, sweep_status: Callable[[], SweepStatus], job: str, state: str,
                     words: list[str]) -> SweepStanding:
    """``status NAME --state STATE``: the sweep's elements in that state (a job's name is refused)."""
    with edge.store_errors(at, job):
        try:
            return sweep_status().of(JobId(job), state)
        except NotASweep as exc:
            raise BadInput(str(exc)) from None
        except UnknownJob:
            edge.sweep_owned_elsewhere(at, job, words)
            raise


def _job_or_sweep(at: At, reads: Reads, job: str,
                  words: list[str]) -> JobView | SweepStanding | PipelineStanding:
    """The job of that name, asked of its scheduler if Unattended; else the sweep of that name; else the
    pipeline of that name (sweep_members.py: the one rule)."""
    with edge.store_errors(at, job):
        try:
            return reads.status().one(JobId(job), live=True, times=True)
        except UnknownJob as unknown:  # no job of that name: the sweep of that name, if one is recorded here
            try:
                return reads.sweep_status().of(JobId(job))
            except UnknownJob:
                pipeline = reads.sweep_status().pipeline(JobId(job))
                if pipeline is not None:
                    return pipeline
                edge.sweep_owned_elsewhere(at, job, words)
                raise unknown from None  # the store's own words, and where its pointer says it is
        except (JobsError, RecordDamaged) as exc:
            raise BadInput(f"the record of job {job} does not read: {exc}") from None


def _own_pointer(at: At, job: str) -> None:
    """Its own pointer: display only, the record here is what counts, and it read."""
    try:
        for _, problem in edge.pointer_surveys(at).damaged_of([JobId(job)]):
            edge.say(edge.damaged_pointer_line(problem))
    except Exception as exc:
        edge.say(f"pointers not read: {reason(exc)}")


def _status_json(view: JobView, now: datetime) -> dict[str, Any]:
    shown = render.view_json(view, now)
    if view.state.spec.waits:  # a job that waits for others (docs/json.md): what, and what holds it back now
        shown["waits_for"] = [{"job": d.on, "kind": str(d.kind)} for d in view.state.spec.waits]
        from dunscaith.entrypoints.dunscaith.render_pipeline import gate_json  # a job that waits only

        shown["held_back"] = gate_json(view.gate)
    if view.live is not None:  # an Unattended job: what its scheduler says now, beside the record
        shown["live"] = {"state": view.live.state, "detail": view.live.detail,
                         "asked_at": view.live.asked_at.isoformat() if view.live.asked_at else None}
    shown.update(render.scheduler_json(view))
    return shown


def _status_lines(view: JobView, now: datetime, job: str) -> None:
    s = view.state
    _line(render.view_line(view, now))
    if view.gate is not None:  # a step that waits: what it waits for, or what blocked it
        _line(f"  {view.gate.line()}")
    if view.live is not None:
        _line(f"  live: {view.live.state or 'unknown'} ({view.live.detail}; the record says {view.label})")
    _line(f"  command: {render.command_text(s.spec)}")
    _times_lines(view, now)
    _spec_lines(s.spec)
    _attempt_lines(view, now)
    for e in s.escalations:
        _line(f"  escalation ({e.reason}): {e.detail}")
    for failure in s.failures:
        _line(f"  not carried out: {failure}")
    for r in s.unanswered:
        _line(f"  request {r.id} ({r.action}): not answered yet")
    for o in view.left if s.outcome is not None else ():
        _line(f"  outstanding: {o.what}")
    if view.unattended:
        _line(f"  Unattended: no supervisor holds it; reattach with: {PROG} supervise {job}")


def _times_lines(view: JobView, now: datetime) -> None:
    """The times as dunscaith saw them, then its scheduler's (or why they are not known)."""
    s = view.state
    t = render.times(s, now)
    _line(f"  submitted {render.local_time(t['submitted'])}  started {render.local_time(t['started'])}  "
          f"ended {render.local_time(t['ended'])}  elapsed {render.elapsed_text(render.elapsed_seconds(s, now))}"
          "  (as dunscaith saw them)")
    by_scheduler = render.scheduler_times(view)
    if by_scheduler is not None:
        _line(f"  scheduler ({by_scheduler.source}): {render.times_words(by_scheduler, now)}")
    elif view.scheduler_times is not None and view.scheduler_times.problem:
        _line(f"  scheduler times: {view.scheduler_times.problem}")


def _spec_lines(spec: JobSpec) -> None:
    _line(f"  cluster {spec.cluster} ({spec.adapter})  workdir {spec.workdir or '-'}")
    if spec.resources or spec.options:
        _line(f"  resources: {' '.join([*spec.resources.shown(), *spec.options])}")
    if spec.env:
        _line(f"  environment: {', '.join(pair.split('=', 1)[0] for pair in spec.env)}")


def _attempt_lines(view: JobView, now: datetime) -> None:
    """Each attempt, with its scheduler's times when there were several, and its output files."""
    s = view.state
    known = view.scheduler_times.by_object if view.scheduler_times is not None else {}
    for a in s.attempts:
        obj = f" {a.object_id} {a.object_state or ''}".rstrip() if a.object_id else ""
        _line(f"  attempt {a.number}: {a.order}{obj}")
        if a.cause or (a.needs is not None and a.needs != s.spec.resources):  # needs of its own: shown, with why
            needs = " ".join(a.needs.shown()) if a.needs is not None else "-"
            _line(f"    needs: {needs or '-'}  ({a.cause}{f': {a.why}' if a.why else ''})")
        if len(s.attempts) > 1 and a.object_id is not None and a.object_id in known:
            _line(f"    scheduler ({known[a.object_id].source}): {render.times_words(known[a.object_id], now)}")
        if a.stdout:
            _line(f"    stdout: {a.stdout}")
        if a.stderr and a.stderr != a.stdout:
            _line(f"    stderr: {a.stderr}")


def _known_state(state: str) -> None:
    if state not in state_words():
        raise BadInput(f"--state {quoted(state)}: no job is ever in that state{_did_you_mean(state, state_words())}; "
                       f"the states are {', '.join(state_words())}")


def _sweep_status(at: At, sweep: SweepStanding, as_json: bool) -> int:
    """``status NAME`` of a sweep: its counts by state, then each element not succeeded (or each in the
    state asked for), from the elements' summaries (one query, no fold). 1 when some element's outcome is
    not success, as status of a job."""
    name, state = sweep.sweep, sweep.state
    edge.notice_unattended(at, skip=name)
    edge.sweep(at)
    code = ExitCode.NOT_SUCCESS if sweep.failed else ExitCode.SUCCEEDED
    if as_json:
        print(json.dumps(sweep_render.sweep_json(sweep), indent=2))
        return code
    n = len(sweep.elements)
    _line(f"sweep {name}: {n} element{'s' if n != 1 else ''}: {counts_words(sweep.word(s) for s in sweep.elements)}  "
          f"(cluster {', '.join(sweep.clusters)})")
    listed = sweep.listed
    if state is not None and not listed:
        _line(f"  no element is {state}")
    width = max((len(s.job) for s in listed), default=0)
    states = max((len(sweep.word(s)) for s in listed), default=0)
    for s in listed:
        gate = sweep.answers.get(s.job)
        held_back = gate.line() if gate is not None and sweep.word(s) != s.state else ""
        detail = s.outcome_detail or s.problem or held_back
        _line(f"  {s.job.ljust(width)}  {sweep.word(s).ljust(states)}  {detail}".rstrip())
    if sweep.unattended:
        n = len(sweep.unattended)
        _line(f"  Unattended: {n} element{'s' if n != 1 else ''} with work left and no supervisor; reattach "
              f"with: {PROG} supervise {name}")
    if listed:
        _line(f"  one element: {PROG} status {listed[0].job}")
    elif state is None:
        _line(f"  every element succeeded; one element: {PROG} status {sweep.elements[0].job}")
    return code


def _pipeline_status(at: At, pipeline: PipelineStanding, as_json: bool) -> int:
    """``status NAME`` of a pipeline: a header, one line per step (its state, a sweep's counts, what it
    waits for or what blocked it), and how it ended once it has. 1 when some job's outcome is not success
    or the pipeline ended without every step succeeding, as status of a sweep."""
    name = pipeline.name
    edge.notice_unattended(at, skip=name, pipelines={name: pipeline})
    edge.sweep(at)
    ending = pipeline.ending
    failed = pipeline.failed or (ending is not None and ending.exit_code != ExitCode.SUCCEEDED)
    code = ExitCode.NOT_SUCCESS if failed else ExitCode.SUCCEEDED
    if as_json:
        from dunscaith.entrypoints.dunscaith.render_pipeline import pipeline_json

        print(json.dumps(pipeline_json(pipeline), indent=2))
        return code
    n = len(pipeline.steps)
    _line(f"pipeline {name}: {n} step{'s' if n != 1 else ''}: {counts_words(s.state for s in pipeline.steps)}  "
          f"(cluster {', '.join(pipeline.clusters)})")
    width = max(len(step.job) for step in pipeline.steps)
    for step in pipeline.steps:
        _line(f"  {step.job.ljust(width)}  {step.line[len(step.job) + 2:]}")
    unattended = pipeline.unattended
    if unattended and ending is None:
        k = len(unattended)
        _line(f"  Unattended: {k} job{'s' if k != 1 else ''} with work left and no supervisor; reattach with: "
              f"{PROG} supervise {name}")
    if ending is not None:
        _line(ending.line)
    else:
        first = next((step for step in pipeline.steps if step.state != "succeeded"), pipeline.steps[0])
        _line(f"  one step: {PROG} status {first.job}")
    return code


def _line(text: str) -> None:
    """A line of status or list: a workdir, an option, a path or a problem holds what the user or a
    scheduler gave, and a control character in it must not forge a line or drive the terminal."""
    print(escaped(text))


def _since(text: str | None, now: datetime) -> datetime | None:
    if text is None:
        return None
    from dunscaith.domain.model.jobs.prune import BadDuration, parse_duration  # list --since only

    try:
        return now - parse_duration(text)
    except BadDuration:
        pass
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise BadInput(f"--since {text!r}: give a duration (12h, 2d) or a date (2026-12-01, "
                       "2026-12-01T10:00)") from None
    return at if at.tzinfo is not None else at.astimezone()


def list_jobs(at: At, listing_of: Callable[[], JobListing], as_json: bool = False,
              show_all: bool = False, wide: bool = False,
              state: str | None = None, cluster: str | None = None, since: str | None = None,
              limit: int | None = None, columns: str | None = None, noheader: bool = False,
              expand: bool = False) -> int:
    """``list`` with its options (commands/status.py declares them, with their help)."""
    keys = _columns(columns, wide)
    if state is not None:
        _known_state(state)
    # A login node where nothing was ever recorded has no store: list shows what the pointers say and makes
    # none; unless this host's own pointers name jobs recorded here: then its store is lost, and opening it
    # says so (domain/services/jobs/store_creation.py).
    early = None if edge.store_exists(at) else _pointers(at, show_all, [])
    here = early is None or early.recorded_here
    if here:
        edge.open_store(at)
    if cluster is not None:
        _known_cluster(at, listing_of, cluster, here)
    listing = listing_of() if here else None
    # no store: no row is judged at this time (--since is still checked)
    now = listing.now() if listing is not None else datetime.now().astimezone()
    query = SummaryQuery(include_pruned=show_all, state=state, cluster=cluster, since=_since(since, now),
                         limit=_limit(limit, as_json))
    out = _JsonJobs() if as_json else None
    rows = None if as_json else table.Table(keys, None if wide else table.output_width(), print,
                                            header=not noheader)
    page = _Page()
    with edge.store_errors():
        if listing is not None:
            _write_rows(listing, query, page, out, rows, now, expand=expand or as_json)
        elif rows is not None:
            rows.close()
    if page.more > 0:
        edge.say(f"{page.more} older job{'s' if page.more != 1 else ''} not shown (newest first): --limit N, or "
                 "--limit 0 for all")
    survey = early if early is not None and not here else _pointers(at, show_all, page.shown)
    expired = edge.expire(at)  # list drops expired entries (reported) and asks no scheduler
    residual = _residual(expired, show_all)
    if out is not None:
        out.rest(_rest_json(page, survey, expired, residual))
        return 0
    _rest_lines(survey, expired, residual, expand)
    # a pipeline's Unattended jobs are one line, naming it, counted from its row when it has one
    edge.notice_unattended(at, survey=survey, pipelines=page.pipelines)
    return 0


def _columns(columns: str | None, wide: bool) -> tuple[str, ...]:
    try:
        return table.parse_format(columns) if columns is not None else table.WIDE if wide else table.DEFAULT
    except table.UnknownColumn as exc:
        raise BadInput(str(exc)) from None


@dataclass
class _Page:
    """What list's rows leave for the rest of it: the records that did not read, the jobs shown (whose
    pointers are checked for damage: the ones this page shows), and how many older ones the limit left out."""

    unreadable: list[Unreadable] = field(default_factory=list)
    shown: list[JobId] = field(default_factory=list)
    more: int = 0
    pipelines: dict[JobId, PipelineStanding] = field(default_factory=dict)  # the rows' (the notice counts them)


def _write_rows(listing: JobListing, query: SummaryQuery, page: _Page, out: _JsonJobs | None,
                rows: table.Table | None, now: datetime, *, expand: bool) -> None:
    """The rows, written as they are read: memory flat in the number of jobs; --json lists every job,
    elements too."""
    covered = Covered()
    try:
        for v in listing.rows(query, covered, expand=expand):
            if isinstance(v, SweepRow):
                if rows is not None:  # its elements' pointers are checked with --expand
                    rows.sweep_row(v, now)
                continue
            if isinstance(v, PipelineRow):
                page.pipelines[v.view.name] = v.view
                if rows is not None:
                    rows.pipeline_row(v, now)
                continue
            if isinstance(v, Unreadable):
                page.unreadable.append(v)
                if rows is not None:
                    rows.line(f"{v.job}  damaged: {v.problem}")
            elif out is not None:
                out.job(render.view_json(v, now))
            elif rows is not None:
                rows.row(v, now)
            page.shown.append(v.job if isinstance(v, Unreadable) else v.state.name)
    finally:  # the rows held back to set the widths are shown even when the store fails midway
        if rows is not None:
            rows.close()
    if query.limit is not None and covered.rows >= query.limit:
        page.more = listing.count(query) - covered.jobs


def _residual(expired: SweepReport | None, show_all: bool) -> list[tuple[ResidualEntry, bool]]:
    """The residual entries list shows, each with whether it was just dropped as expired."""
    residual = [(e, True) for e in expired.expired] + [(e, False) for e in expired.kept] if expired else []
    # a pruned job has left the list (docs/job-commands.md): its entry is only for sweeps, shown with --all
    return [(e, gone) for e, gone in residual if show_all or gone or e.reason is not ResidualReason.PRUNED]


def _rest_json(page: _Page, survey: PointerSurvey, expired: SweepReport | None,
               residual: list[tuple[ResidualEntry, bool]]) -> dict[str, Any]:
    return {
        "damaged": ([{"job": v.job, "what": "record", "problem": v.problem} for v in page.unreadable]
                    + [{"job": job, "what": "pointer", "problem": problem} for job, problem in survey.damaged]
                    + [{"job": job, "what": "residual entry", "key": key, "problem": problem}
                       for job, key, problem in (expired.damaged if expired else [])]),
        "pointers": [{"job": p.pointer.job, "host": p.pointer.host, "state": p.pointer.state,
                      "unattended": p.unattended,
                      "supervised_at": p.pointer.supervised_at.isoformat() if p.pointer.supervised_at else None,
                      "sweep": p.pointer.sweep}
                     for p in survey.elsewhere],
        "residual": [render.entry_json(e, gone) for e, gone in residual],
    }


def _rest_lines(survey: PointerSurvey, expired: SweepReport | None, residual: list[tuple[ResidualEntry, bool]],
                expand: bool) -> None:
    """After the table: other hosts' jobs (a sweep's elements as one line unless --expand), then what is
    damaged, then the residual entries."""
    for row in (survey.elsewhere if expand else by_sweep(survey.elsewhere)):
        if isinstance(row, PointedSweep):
            looks = sum(1 for e in row.elements if e.unattended)
            counts = counts_words(e.pointer.state for e in row.elements)
            _line(f"{row.sweep}  sweep of {len(row.elements)}: {counts}  on host {row.host} (from its elements' "
                  f"pointers{f'; {looks} look Unattended' if looks else ''}; --expand for each)")
        else:
            p, u = row.pointer, row.unattended
            _line(f"{p.job}  {p.state}  on host {p.host} (from its pointer{'; looks Unattended' if u else ''})")
    for job, problem in survey.damaged:
        _line(f"{job}  damaged pointer: {problem}")
    for job, key, problem in expired.damaged if expired else []:
        _line(f"{job}  damaged residual entry {key}: {problem}")
    for e, gone in residual:
        _line(render.entry_line(e, gone))


def _did_you_mean(given: str, known: list[str]) -> str:
    found = get_close_matches(given, known, n=1)
    return f" (did you mean {found[0]}?)" if found else ""


def _known_cluster(at: At, listing: Callable[[], JobListing], cluster: str, here: bool) -> None:
    """A cluster of the configuration, or one some recorded job names (a cluster since removed from it).
    ``here``: this host has a store (none: no job is recorded here)."""
    configured = sorted(edge.settings(at).clusters)
    if cluster in configured:
        return
    recorded = 0
    with edge.store_errors():
        if here:
            recorded = listing().count(SummaryQuery(include_pruned=True, cluster=cluster))
    if not recorded:
        raise BadInput(f"--cluster {quoted(cluster)}: no such cluster is configured and no job of it is "
                       f"recorded{_did_you_mean(cluster, configured)}; configured: {', '.join(configured)}")


def _pointers(at: At, show_all: bool, shown: list[JobId]) -> PointerSurvey:
    """The pointers list shows: other hosts' jobs (not settled, from the index; every one with --all)
    and the damaged pointers among those read and among the shown jobs' own."""
    try:
        return edge.pointer_surveys(at).listed(shown, every=show_all)
    except Exception as exc:  # pointers are display only
        edge.say(f"pointers not read: {reason(exc)}")
        return PointerSurvey((), ())


def _limit(given: int | None, as_json: bool) -> int | None:
    if given is not None:
        return given or None
    if as_json:
        return None
    # a screenful: the terminal's height less a few lines for notices (a pipe gets the fallback's 50)
    return max(10, shutil.get_terminal_size((80, DEFAULT_LINES)).lines - 4)


class _JsonJobs:
    """``list --json``'s one object on stdout, its ``jobs`` written one at a time as they are read, then
    the rest (what did not read, pointers, residual entries: few) once the jobs are done."""

    def __init__(self) -> None:
        self._first = True

    def job(self, value: dict[str, Any]) -> None:
        text = json.dumps(value, indent=2).replace("\n", "\n    ")
        sys.stdout.write(('{\n  "jobs": [\n    ' if self._first else ",\n    ") + text)
        self._first = False

    def rest(self, body: dict[str, Any]) -> None:
        sys.stdout.write('{\n  "jobs": []' if self._first else "\n  ]")
        for key, value in body.items():
            sys.stdout.write(f",\n  {json.dumps(key)}: " + json.dumps(value, indent=2).replace("\n", "\n  "))
        sys.stdout.write("\n}\n")
