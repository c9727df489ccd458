"""Where the configuration file and the remembered settings are, without pydantic (routing finds them before
typer): under the config and cache homes, whose one rule is ``domain.model.user_paths.xdg_home``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from dunscaith.adapters.durable.config_dir import cache_home, config_home


def config_file(env: Mapping[str, str] | None = None) -> Path:
    return config_home(env) / "dunscaith" / "config.toml"


def cache_file(env: Mapping[str, str] | None = None) -> Path:
    """The remembered settings (settings_cache.py): ``$XDG_CACHE_HOME/dunscaith/settings.json``."""
    return cache_home(env) / "dunscaith" / "settings.json"
