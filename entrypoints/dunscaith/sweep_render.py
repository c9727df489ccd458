"""How ``status`` and ``list`` show a sweep: ``status NAME``'s JSON, the state cell of ``list``'s row."""

from __future__ import annotations

from typing import Any

from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.services.jobs.sweep_status import SweepView, counted


def element_json(s: JobSummary, held: bool) -> dict[str, Any]:
    """One element, from its summary (no fold): what ``status NAME --json`` gives of each."""
    return {
        "job": s.job,
        "index": s.sweep_index,
        "state": s.state,
        "outcome": None if s.outcome is None else {"result": s.outcome, "detail": s.outcome_detail},
        "settled": s.settled,
        "attempts": s.attempts,
        "object_id": s.object_id,
        "cluster": s.cluster,
        "adapter": s.adapter,
        "recorded_at": s.recorded_at.isoformat(),
        "updated_at": s.updated_at.isoformat(),
        "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
        "supervised": held,
        "problem": s.problem,
    }


def sweep_json(sweep: SweepView) -> dict[str, Any]:
    """``status NAME --json`` of a sweep (docs/json.md)."""
    shown = sweep.elements if sweep.state is None else sweep.listed
    return {
        "sweep": sweep.sweep,
        "elements_total": len(sweep.elements),
        "counts": dict(counted(sweep.elements)),
        "state": sweep.state,
        "clusters": sweep.clusters,
        "recorded_at": sweep.recorded_at.isoformat(),
        "updated_at": sweep.updated_at.isoformat(),
        "unattended": [s.job for s in sweep.unattended],
        "elements": [element_json(s, s.job in sweep.held) for s in shown],
    }


def dominant(sweep: SweepView) -> str:
    """The state cell of a sweep's row in ``list``: ``sweep of 500: 480 succeeded, 13 failed, 7 running``, or
    ``sweep of 500: succeeded`` when every element is in one state."""
    counts = counted(sweep.elements)
    n = len(sweep.elements)
    if len(counts) == 1:
        return f"sweep of {n}: {counts[0][0]}"
    return f"sweep of {n}: " + ", ".join(f"{count} {state}" for state, count in counts)
