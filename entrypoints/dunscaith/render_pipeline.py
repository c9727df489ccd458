"""How ``status`` and ``list`` show a pipeline: ``status NAME --json`` (docs/json.md), ``list``'s row."""

from __future__ import annotations

from typing import Any

from dunscaith.domain.model.jobs.dependencies import Blocked, Readiness, Waiting
from dunscaith.domain.model.jobs.sweep_counts import by_state, counts_words
from dunscaith.domain.services.jobs.pipeline_status import PipelineStanding, StepStanding
from dunscaith.entrypoints.dunscaith.sweep_render import element_json


def gate_json(answer: Readiness | None) -> dict[str, Any] | None:
    """What holds back a job not started: ``{"waiting_for": JOB}`` or ``{"blocked_by": JOB, "job": ..., "why":
    ...}`` and the line status says; None when nothing does."""
    if isinstance(answer, Waiting):
        return {"waiting_for": answer.on, "line": answer.line()}
    if isinstance(answer, Blocked):
        return {"blocked_by": answer.by, "job": answer.job, "why": answer.why, "line": answer.line()}
    return None


def step_json(step: StepStanding, held: frozenset[str]) -> dict[str, Any]:
    """One step of ``status NAME --json``: its job or sweep, state, counts, what it waits for and what holds
    it back; a sweep's every element, a job's summary."""
    held_back = step.held_back
    body: dict[str, Any] = {
        "step": step.step,
        "job": step.job,
        "kind": "sweep" if step.is_sweep else "job",
        "state": step.state,
        "counts": dict(by_state(step.words)),
        "waits_for": [{"job": d.on, "kind": str(d.kind)} for d in step.waits_for],
        "waiting_for": held_back.on if isinstance(held_back, Waiting) else None,
        "blocked_by": gate_json(held_back) if isinstance(held_back, Blocked) else None,
        "line": step.line,
    }
    members = [{**element_json(m, m.job in held), "state": step.word(m)} for m in step.members]
    if step.is_sweep:
        body["elements_total"] = len(members)
        body["elements"] = members
    else:
        body["summary"] = members[0] if members else None
    return body


def pipeline_json(pipeline: PipelineStanding) -> dict[str, Any]:
    """``status NAME --json`` of a pipeline (docs/json.md, "A pipeline's status")."""
    ending = pipeline.ending
    return {
        "name": pipeline.name,
        "kind": "pipeline",
        "state": pipeline.state,
        "steps_total": len(pipeline.steps),
        "counts": dict(by_state(step.state for step in pipeline.steps)),
        "clusters": pipeline.clusters,
        "recorded_at": pipeline.recorded_at.isoformat(),
        "updated_at": pipeline.updated_at.isoformat(),
        "ended": None if ending is None else {"exit_code": int(ending.exit_code), "line": ending.line},
        "unattended": [m.job for m in pipeline.unattended],
        "steps": [step_json(step, pipeline.held) for step in pipeline.steps],
    }


def pipeline_cell(pipeline: PipelineStanding) -> str:
    """The state cell of a pipeline's row in ``list``: ``pipeline of 3: 1 succeeded, 1 running, 1 waiting``
    (its steps' states), or ``pipeline of 3: succeeded`` when every step is in one state."""
    states = [step.state for step in pipeline.steps]
    n = len(states)
    return f"pipeline of {n}: {states[0] if len(set(states)) == 1 else counts_words(states)}"
