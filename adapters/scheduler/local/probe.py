"""``LocalProbe``: the local scheduler has no controller to reach and keeps every end itself."""

from __future__ import annotations

from pathlib import Path

from dunscaith.domain.model.jobs.check import Probe, Result


class LocalProbe:
    def __init__(self, root: Path) -> None:
        self.root = root

    def controller(self) -> Probe:
        return Probe(Result.OK, f"this host runs its own objects (in {self.root / 'local-scheduler'}): "
                                "nothing to reach")

    def accounting(self) -> Probe:
        return Probe(Result.OK, "kept: each object's end is recorded in its own folder until it is pruned")
