"""What the front door's plain ``submit`` reads of the settings (``settings_cache.submit_settings``): the
remembered answer of ``load_settings`` in the shape of ``DunscaithSettings`` (``.supervise.poll``,
``.cluster(name).adapter``...), so that submit's body and the builders read either. NamedTuples, not
dataclasses: a dataclass costs ~0.5 ms to define, and this module is on the path of every plain submit
(and only of it: the read path never imports it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dunscaith.entrypoints.dunscaith.settings_cache import (
    ReadSettings,
    RecordsPlace,
    RoutingSettings,
    read_cached_part,
    settings_key,
    validated,
)


class SupervisePlace(NamedTuple):
    """``supervise.*`` as the supervisor and submit read it (``SuperviseSection``'s fields)."""

    poll: float
    poll_max: float
    giveup: float
    drain: float
    wait: float
    absence: float
    exit_code: str


class RecoveryPlace(NamedTuple):
    attempts: int  # recovery.attempts
    by_cluster: dict[str, Any]  # each cluster's opt-in recovery as plain values (recovery_rules.by_cluster)


class EscalationsPlace(NamedTuple):
    command: list[str]  # escalations.command
    timeout: float  # escalations.timeout


class NotifyPlace(NamedTuple):
    command: list[str]  # notify.command
    on: list[str]  # notify.on
    timeout: float  # notify.timeout


class ResidualPlace(NamedTuple):
    policy: str  # residual.policy


class ClusterPlace(NamedTuple):
    adapter: str  # clusters.NAME.adapter


class SubmitSettings(NamedTuple):
    """What the front door's plain ``submit -- COMMAND`` reads of the settings (``submits.py``), remembered
    beside the read path's from the same ``load_settings`` answer, in the shape of ``DunscaithSettings``
    (``.supervise.poll``, ``.cluster(name).adapter``...) so that the same bodies and builders read either."""

    read: ReadSettings
    supervise: SupervisePlace
    recovery: RecoveryPlace
    escalations: EscalationsPlace
    residual: ResidualPlace
    notify: NotifyPlace

    @property
    def records(self) -> RecordsPlace:
        return self.read.records

    @property
    def forwarding(self) -> RoutingSettings:
        return self.read.routing

    def cluster(self, name: str) -> ClusterPlace:
        """A configured cluster's adapter; one not configured is refused by ``load_settings``' own words."""
        known = dict(self.read.clusters)
        if name in known:
            return ClusterPlace(known[name])
        from dunscaith.entrypoints.dunscaith.settings import load_settings

        return ClusterPlace(load_settings().cluster(name).adapter)  # BadInput, word for word


def submit_settings() -> SubmitSettings:
    """The plain submit's settings, validated by ``load_settings`` (BadInput, one line, when they are wrong)."""
    key = settings_key()
    found = read_cached_submit(key)
    if found is not None:
        return found
    reads, values = validated(key)
    made = of_values(reads, values)
    assert made is not None  # load_settings' own answer
    return made


def read_cached_submit(key: str, env: Mapping[str, str] | None = None) -> SubmitSettings | None:
    """The plain submit's settings remembered for ``key`` (an answer remembered without them: a miss)."""
    cached = read_cached_part(key, "submit", env)
    return None if cached is None else of_values(*cached)


def of_values(reads: ReadSettings, values: Any) -> SubmitSettings | None:
    """The settings of ``settings_cache.submit_values``' answer; None when it is not one (damaged, not ours)."""
    try:
        command = values["escalations_command"]
        if not isinstance(command, list) or not all(isinstance(word, str) for word in command):
            return None
        notify = NotifyPlace(values["notify_command"], values["notify_on"], float(values["notify_timeout"]))
        if not all(isinstance(words, list) and all(isinstance(w, str) for w in words) for words in notify[:2]):
            return None
        if not isinstance(values["exit_code"], str) or not isinstance(values["residual_policy"], str):
            return None
        supervise = SupervisePlace(float(values["poll"]), float(values["poll_max"]), float(values["giveup"]),
                                   float(values["drain"]), float(values["wait"]), float(values["absence"]),
                                   values["exit_code"])
        if not isinstance(values["recovery"], dict):
            return None
        return SubmitSettings(reads, supervise, RecoveryPlace(int(values["attempts"]), values["recovery"]),
                              EscalationsPlace(command, float(values["escalations_timeout"])),
                              ResidualPlace(values["residual_policy"]), notify)
    except (ValueError, KeyError, TypeError):
        return None
