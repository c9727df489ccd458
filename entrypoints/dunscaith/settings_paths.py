"""Where the configuration file is, without pydantic (routing finds it before typer): under the config home
whose one rule is ``adapters.durable.config_dir.config_home``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dunscaith.adapters.durable.config_dir import config_home


def config_file(env: Mapping[str, str] | None = None) -> Path:
    return config_home(env) / "dunscaith" / "config.toml"
