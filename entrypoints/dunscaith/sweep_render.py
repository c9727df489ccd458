"""How ``status`` and ``list`` show a sweep: ``status NAME``'s JSON, the state cell of ``list``'s row."""

from __future__ import annotations

from typing import Any

from dunscaith.domain.model.jobs.summary import JobSummary
from dunscaith.domain.model.jobs.sweep_counts import by_state, counts_words
from dunscaith.domain.services.jobs.sweep_status import SweepStanding


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


def sweep_json(sweep: SweepStanding) -> dict[str, Any]:
    """``status NAME --json`` of a sweep (docs/json.md)."""
    shown = sweep.elements if sweep.state is None else sweep.listed
    return {
        "sweep": sweep.sweep,
        "elements_total": len(sweep.elements),
        "counts": dict(by_state(sweep.word(s) for s in sweep.elements)),
        "state": sweep.state,
        "clusters": sweep.clusters,
        "recorded_at": sweep.recorded_at.isoformat(),
        "updated_at": sweep.updated_at.isoformat(),
        "unattended": [s.job for s in sweep.unattended],
        "elements": [{**element_json(s, s.job in sweep.held), "state": sweep.word(s)} for s in shown],
    }


def dominant(sweep: SweepStanding) -> str:
    """The state cell of a sweep's row in ``list``: ``sweep of 500: 480 succeeded, 13 failed, 7 running``, or
    ``sweep of 500: succeeded`` when every element is in one state."""
    states = [s.state for s in sweep.elements]
    n = len(states)
    if len(set(states)) == 1:
        return f"sweep of {n}: {states[0]}"
    return f"sweep of {n}: {counts_words(states)}"
