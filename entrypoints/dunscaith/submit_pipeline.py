"""``dunscaith submit --pipeline FILE``: every step of a pipeline file recorded at once, then supervised by
one foreground process (docs/pipelines.md).

The file is read and checked whole first (``pipeline_file.read_pipeline``); then each step's cluster is
known and asked what it cannot honour; then the names must be free; then every step's job and every
element of its sweep is recorded in one transaction (``RecordPipeline``), all or nothing. Any refusal is one
line naming the file and the step, exit 2, and nothing is recorded.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dunscaith.domain.model.jobs.pipelines import PipelineRefused, PipelineSpec, step_jobs
from dunscaith.domain.model.jobs.pointer import PointerError
from dunscaith.domain.model.jobs.sweeps import NameTaken
from dunscaith.domain.model.shown import escaped
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import edge, submit_job, sweep_supervision
from dunscaith.entrypoints.dunscaith.edge import At, CommandContext
from dunscaith.entrypoints.pipeline_file import read_pipeline

if TYPE_CHECKING:
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.services.jobs.submit import RecordPipeline
    from dunscaith.entrypoints.dunscaith.supervision import Supervising


def not_with_pipeline(given: dict[str, bool]) -> None:
    """Refuse, in one line, an option of submit that has no meaning with --pipeline (``given``: each such
    option, by how the user knows it, and whether it was given)."""
    unfit = next((flag for flag, was in given.items() if was), None)
    if unfit is None:
        return
    if unfit == "a command":
        raise BadInput("give --pipeline FILE or a command, not both: each step's command is in the file")
    raise BadInput(
        f"{unfit} is not for --pipeline: each step takes what it runs with from the file (docs/pipelines.md)"
    )


def submit_pipeline(
    at: At,
    file: Path,
    name: str | None,
    *,
    record_pipeline: Callable[[], RecordPipeline],
    supervising: Supervising,
    cluster: str,
    notify: bool | None,
    as_json: bool,
    parsable: bool,
) -> int:
    """Read ``file``, record every step's jobs at once (or nothing), then supervise the pipeline to its end.
    ``cluster``: submit's --cluster, the cluster of a step that names none in a file that names none."""
    if as_json and parsable:
        raise BadInput("give --json or --parsable, not both: each is what stdout holds")
    drain = edge.interrupts(at)
    pipeline = read_pipeline(file, name)
    by_step = _specs(at, pipeline, cluster, notify)
    edge.open_store(at)
    record = record_pipeline()
    _ready(record, pipeline, by_step)
    try:
        record.pointers_writable()
    except PointerError as exc:
        raise BadInput(
            f"{exc}; nothing was recorded: every login node finds a job by its pointer there, so "
            "fix that folder, then submit again"
        ) from None
    specs = [spec for jobs in by_step.values() for spec in jobs]
    try:
        with edge.store_errors():
            record.check_free(pipeline.name, specs)
        edge.notice_unattended(at)
        with edge.store_errors():
            record(pipeline.name, specs)
    except NameTaken as exc:
        raise BadInput(f"{exc}; nothing was recorded") from None
    if parsable:  # the pipeline's name alone, once every step is recorded, for a script to keep
        print(pipeline.name, flush=True)
    return sweep_supervision.supervise_pipeline(
        at,
        pipeline.name,
        drain,
        supervising,
        fresh=True,
        as_json=as_json,
        stream=sys.stderr if parsable else None,
    )


def _specs(ctx: CommandContext, pipeline: PipelineSpec, default: str, notify: bool | None) -> dict[str, list[JobSpec]]:
    """Every step's job, or its sweep's elements, by step in the order they may start, each with its
    cluster's defaults (recovery, notices) as a plain submit gives them. One line for an unknown cluster."""
    settings = edge.settings(ctx)
    try:
        workdir: str | None = str(Path.cwd())
    except FileNotFoundError:
        raise BadInput(
            "the current directory no longer exists (removed after you entered it), and each step "
            "runs where submit runs: cd to a directory that exists"
        ) from None
    by_step: dict[str, list[JobSpec]] = {}
    for step in pipeline.order():
        where = f'{escaped(pipeline.file)}: step "{step.name}"'
        cluster = pipeline.cluster_of(step, default)
        try:
            adapter = settings.cluster(cluster).adapter
        except BadInput as exc:
            raise BadInput(f"{where}: cluster: {exc}") from None
        recovery, signal_before, notices = submit_job.cluster_defaults(ctx, cluster, notify=notify)
        try:
            jobs = step_jobs(
                pipeline,
                step,
                cluster=cluster,
                adapter=adapter,
                workdir=workdir,
                max_attempts=settings.recovery.attempts,
            )
        except PipelineRefused as exc:
            raise BadInput(str(exc)) from None
        by_step[step.name] = [
            replace(job, recovery=recovery, signal_before=signal_before, notify=notices) for job in jobs
        ]
    return by_step


def _ready(record: RecordPipeline, pipeline: PipelineSpec, by_step: dict[str, list[JobSpec]]) -> None:
    """Each step's cluster asked, before anything is recorded, what it cannot honour of the step's needs."""
    for step, jobs in by_step.items():
        first = jobs[0]
        with edge.store_errors():  # the cluster's scheduler opens (its folders checked) here
            refused = record.ready(first.cluster, first.resources, first.options)
        if refused is not None:
            raise BadInput(f'{escaped(pipeline.file)}: step "{step}": {refused}')
