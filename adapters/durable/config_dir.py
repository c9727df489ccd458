"""dunscaith's own folders under the user's config home (``~/.config/dunscaith/...``), 0700.

Pointers and the residual list both live there; the config home itself is shared with other programs
and is created if missing but never changed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from dunscaith.adapters.durable.private_dir import ensure_private_dir, make_missing_dirs
from dunscaith.domain.model.user_paths import xdg_home


def user_home(variable: str, fallback: str, env: Mapping[str, str] | None = None) -> Path:
    """The XDG base folder ``variable`` names, else ``fallback`` under the home (``user_paths.xdg_home``'s rule)."""
    env = os.environ if env is None else env
    return Path(xdg_home(variable, fallback, env, env.get("HOME") or str(Path.home())))


def config_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's config home: ``$XDG_CONFIG_HOME``, else ``$HOME/.config`` (the configuration file,
    pointers, the residual list, forwarding's sent requests all start here)."""
    return user_home("XDG_CONFIG_HOME", ".config", env)


def cache_home(env: Mapping[str, str] | None = None) -> Path:
    """The user's cache home: ``$XDG_CACHE_HOME``, else ``$HOME/.cache`` (the remembered settings)."""
    return user_home("XDG_CACHE_HOME", ".cache", env)


def ensure_dunscaith_dir(directory: Path) -> Path:
    """Create ``directory`` (e.g. .../dunscaith/jobs, .../dunscaith/residual) and its dunscaith parent, 0700.

    Only directories of dunscaith's own are made private; the config home above them (``~/.config``)
    is created if missing but never changed, since other programs share it, and so is an existing
    ``~/.config/dunscaith`` (the user may have made it for config.toml). The home folder itself, or one
    above it, is never made: a missing one is MissingHome (an UnsafeDirectory), which callers refuse in one line.
    """
    base = directory.parent
    make_missing_dirs(base.parent)
    # ~/.config/dunscaith may be the user's own (it holds config.toml): made 0700 if missing, else kept
    ensure_private_dir(base, closed_to_others=False)
    return ensure_private_dir(directory)
