"""Where the configuration file is: standard library only, so routing can find it without pydantic."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def config_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    xdg = env.get("XDG_CONFIG_HOME")
    # The XDG spec: a relative value is invalid and ignored (it would follow the current directory).
    base = xdg if xdg and xdg.startswith("/") else str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "dunscaith" / "config.toml"
