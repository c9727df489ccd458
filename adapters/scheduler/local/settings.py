"""The local scheduler's ``[clusters.NAME]`` table: the keys every table holds, nothing of its own."""

from __future__ import annotations

from typing import Literal

from dunscaith.adapters.kind_settings import ClusterSettings


class LocalClusterSettings(ClusterSettings):
    """This machine, under ``dunscaith remote run`` (docs/local-scheduler.md); built in as ``local``."""

    adapter: Literal["local"]
