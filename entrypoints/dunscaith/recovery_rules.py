"""A job's recovery settings at submit (docs/supervisor.md "Recovery policy", docs/configuration.md): the
cluster's ``recovery`` table key by key over ``[recovery]``, then submit's own flags over both. The answer is
recorded in the job's spec, so every supervisor of the job decides alike whatever its configuration.

A plain ``submit -- COMMAND`` reads the same tree from the cache, as plain data (settings_view.py): the rules
below read either by the model's names (``model_fields_set`` included)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.recovery_settings import (
    Growth,
    Recovery,
    SignalBefore,
    parse_signal_before,
)
from dunscaith.domain.model.jobs.resources import parse_count, parse_memory, parse_time_limit
from dunscaith.entrypoints.cli_support import BadInput


def _growth_oom(rule: Any) -> Growth | None:
    if rule is None:
        return None
    return Growth(rule.memory_factor, parse_memory(rule.max_memory, "max_memory"), rule.attempts)


def _growth_time(rule: Any) -> Growth | None:
    if rule is None:
        return None
    return Growth(rule.time_factor, parse_time_limit(rule.max_time, "max_time"), rule.attempts)


def of_rules(general: Any, cluster: Any) -> Recovery:
    """``[recovery]`` with a cluster's ``recovery`` table over it, key by key (adapters/kind_settings.py's
    ``RecoveryRules``, read as values: a plain submit imports no pydantic model)."""
    given = cluster.model_fields_set if cluster is not None else set()

    def pick(name: str) -> Any:
        return getattr(cluster, name) if cluster is not None and name in given else getattr(general, name)

    return Recovery(
        _growth_oom(pick("on_out_of_memory")), _growth_time(pick("on_time_limit")), pick("requeue_on_time_limit") or 0
    )


def recovery_for(settings: Any, cluster: str) -> Recovery:
    """The recovery of a job on ``cluster`` from the settings (``load_settings``' tree, or the same remembered)."""
    return of_rules(settings.recovery, getattr(settings.cluster(cluster), "recovery", None))


# ---- submit's flags -------------------------------------------------------------------------------------


def _pairs(text: str, flag: str, keys: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for part in text.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq or key not in keys or key in found or not value:
            raise BadInput(
                f"{flag} {text[:60]!r}: KEY=VALUE pairs, comma-separated, of {', '.join(keys)} (each once), or no"
            )
        found[key] = value
    return found


def _factor(text: str, flag: str, key: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 1.0 < value <= 100.0:  # nan fails too
        raise BadInput(f"{flag} {key}={text[:20]!r}: a number above 1 and at most 100")
    return value


def parse_growth(text: str, flag: str, memory: bool) -> Growth | None:
    """``--on-out-of-memory`` / ``--on-time-limit``: None for ``no``; BadInput, one line, for a bad value."""
    if text.strip().lower() == "no":
        return None
    factor_key, max_key = ("memory_factor", "max_memory") if memory else ("time_factor", "max_time")
    pairs = _pairs(text, flag, (factor_key, max_key, "attempts"))
    if max_key not in pairs:
        raise BadInput(f"{flag} {text[:60]!r}: give {max_key} (the most an attempt is given)")
    try:
        maximum = (
            parse_memory(pairs[max_key], f"{flag} {max_key}")
            if memory
            else parse_time_limit(pairs[max_key], f"{flag} {max_key}")
        )
        attempts = parse_count(pairs.get("attempts", "2"), f"{flag} attempts", 100)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    factor = _factor(pairs[factor_key], flag, factor_key) if factor_key in pairs else (2.0 if memory else 1.5)
    return Growth(factor, maximum, attempts)


def of_flags(
    recovery: Recovery, signal_before: str | None, requeue: str | None, on_oom: str | None, on_time: str | None
) -> tuple[Recovery, SignalBefore | None]:
    """The settings' recovery with submit's flags over it, and the signal before the time limit."""
    try:
        signal = parse_signal_before(signal_before) if signal_before is not None else None
        if requeue is not None:
            count = 0 if requeue.strip() == "0" else parse_count(requeue, "--requeue-on-time-limit", 1000)
            recovery = replace(recovery, requeue_on_time_limit=count)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None
    if on_oom is not None:
        recovery = replace(recovery, on_out_of_memory=parse_growth(on_oom, "--on-out-of-memory", memory=True))
    if on_time is not None:
        recovery = replace(recovery, on_time_limit=parse_growth(on_time, "--on-time-limit", memory=False))
    return recovery, signal
