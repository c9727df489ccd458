"""Record a pipeline file's jobs in a record root, as ``submit --pipeline FILE`` records them (before it runs
anything): every step's job, or a sweep step's elements in one transaction, each with what it waits for.

The tests and ``benchmarks/pipeline.py`` then run ``dunscaith supervise NAME`` as a real process. The store
is the CLI's default (SQLite in ``root``), opened as the e2e tests open it directly.
"""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pipelines import parse_pipeline, step_jobs
from dunscaith.domain.services.jobs.submit import RecordJob, RecordSweep
from dunscaith.entrypoints.dunscaith.kinds import capabilities


class _NoCrash:
    def reached(self, point: str) -> None:
        pass


def record_pipeline(root: Path, text: str, *, file: str = "study.toml", cluster: str = "local",
                    adapter: str = "local", workdir: Path, max_attempts: int = 3) -> list[JobId]:
    """Every job of the pipeline ``text`` describes, recorded in ``root`` (made if need be) in the steps'
    order; the jobs' names. ``cluster``/``adapter``: the cluster every step runs on, and its adapter's name
    (``local``; ``slurm`` for the test Slurm configured as a cluster)."""
    spec = parse_pipeline(text, file)
    names: list[JobId] = []
    host = SystemHost()
    clock = SystemClock()
    with SqliteStore.open(root, host) as store:
        for step in spec.order():
            jobs = step_jobs(spec, step, cluster=spec.cluster_of(step, cluster), adapter=adapter,
                             workdir=str(workdir), max_attempts=max_attempts)
            if step.is_sweep:
                names += RecordSweep(store, clock, _NoCrash(), host, capabilities=capabilities)(step.job, jobs)
            else:
                names += [RecordJob(store, clock, _NoCrash(), host, capabilities=capabilities)(job) for job in jobs]
    return names
