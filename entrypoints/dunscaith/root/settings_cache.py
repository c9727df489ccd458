"""The validated settings tree, remembered, so that no command pays for validating it again.

The settings are validated by the one ``load_settings`` (pydantic-settings): its answer, the tree, is
remembered, and read back two ways, both the same tree: by the typer path through the same model
(``settings_tree``: pydantic, without pydantic-settings and the sources), and by the paths that run
without pydantic (routing, the front door's plain ``status``/``list``/``submit``) as plain data through
the model's own names (``plain_settings``, settings_view.py). It is remembered in
``$XDG_CACHE_HOME/dunscaith/settings.json`` (``~/.cache/...``), 0600, under a key that is a digest of
**everything the answer depends on**: the code that validates and reads it (settings.py, settings_paths.py,
settings_support.py, settings_view.py, kinds.py, kind_settings.py, user_paths.py, config_dir.py), the kinds
registered (each line) and each kind's own settings model (its kind module and its ``settings.py``), the
configuration file (its bytes and its type, mode and owner), every ``DUNSCAITH_*`` variable (in any
case, as pydantic-settings reads them), HOME, USER, the uid, and every variable a ``$NAME`` in the file
or in those variables could expand. Any change misses, and a miss runs ``load_settings`` again, so a
setting that is wrong is refused with the same one line as on every other path; only a configuration
that validated is ever remembered. Nothing unsafe is trusted: a cache that is not the user's own, 0600,
a regular file and well formed is a miss. This is memory of one parser's answer, never a second parser.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dunscaith.entrypoints.dunscaith.root import kinds, settings_view
from dunscaith.entrypoints.dunscaith.root.settings_paths import cache_file as cache_file
from dunscaith.entrypoints.dunscaith.root.settings_paths import config_file

if TYPE_CHECKING:
    from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings

FORMAT = 2  # 2: the whole tree (settings_view.py), not the plain paths' own shapes
PREFIX = "DUNSCAITH_"
_MAX_BYTES = 256 * 1024  # the tree twice and its shape: ~1 KiB a cluster
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")  # what expand_user_path may expand
_HERE = Path(__file__).resolve().parent
_PACKAGE = _HERE.parents[2]  # dunscaith
_VALIDATING_CODE = (_HERE / "settings.py", _HERE / "settings_paths.py", _HERE / "settings_view.py", _HERE / "kinds.py",
                    _PACKAGE / "entrypoints" / "settings_support.py",
                    _PACKAGE / "adapters" / "kind_settings.py",
                    _PACKAGE / "domain" / "model" / "user_paths.py",
                    _PACKAGE / "adapters" / "durable" / "config_dir.py")


class HopSettings(Protocol):
    """``forwarding.*`` as the forwarding root reads it (``ForwardingSection`` is one)."""

    @property
    def transport(self) -> str | None: ...

    @property
    def ssh_config(self) -> Path | None: ...

    @property
    def heartbeat(self) -> float: ...

    @property
    def connect_timeout(self) -> int: ...

    @property
    def server_alive(self) -> int: ...


def _config_part(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return f"unopened {type(exc).__name__} {exc.errno}".encode()
    try:
        st = os.fstat(fd)
        head = f"{st.st_mode} {st.st_uid} {st.st_size} {st.st_mtime_ns} {st.st_ino}".encode()
        if not stat.S_ISREG(st.st_mode) or st.st_size > (1 << 20):
            return head
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return head + b"\0" + hashlib.sha256(b"".join(chunks)).digest()
    except OSError as exc:
        return f"unread {exc.errno}".encode()
    finally:
        os.close(fd)


def settings_key(env: Mapping[str, str] | None = None) -> str:
    """The digest of every input ``load_settings`` reads (see the module's docstring)."""
    env = os.environ if env is None else env
    digest = hashlib.sha256(f"format {FORMAT}\0".encode())
    for path in _VALIDATING_CODE:
        digest.update(_config_part(path))
    lines, kind_files = kinds.settings_sources()  # each kind's registration line and settings model
    digest.update("\0".join(lines).encode())
    for kind_file in kind_files:
        digest.update(kind_file.encode() + b"\0" + _config_part(Path(kind_file)))
    config = config_file(env)
    config_bytes = _config_part(config)
    digest.update(str(config).encode() + b"\0" + config_bytes)
    ours = sorted((name, value) for name, value in env.items() if name.upper().startswith(PREFIX))
    names = {"HOME", "USER"}
    try:
        names.update(_VARIABLE.findall(config.read_text("utf-8", "replace")) if config.is_file() else [])
    except OSError:
        pass
    for _, value in ours:
        names.update(_VARIABLE.findall(value))
    digest.update(json.dumps([os.geteuid(), ours, sorted((n, env.get(n)) for n in names)]).encode())
    return digest.hexdigest()


def _remembered(key: str, env: Mapping[str, str] | None) -> dict[str, Any] | None:
    from dunscaith.adapters.durable.private_read import read_private

    try:
        obj = json.loads(read_private(cache_file(env), _MAX_BYTES, closed_to_others=True))
    except (OSError, ValueError):
        return None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT or obj.get("key") != key:
        return None
    return obj


def read_cached(key: str, env: Mapping[str, str] | None = None) -> DunscaithSettings | None:
    """The tree remembered for ``key``, as plain data (settings_view.py); None when none is (or not ours)."""
    obj = _remembered(key, env)
    return None if obj is None else settings_view.of_remembered(obj.get("whole"), obj.get("tree"), obj.get("shape"))


def remember(key: str, settings: DunscaithSettings, env: Mapping[str, str] | None = None) -> None:
    """Keep ``settings`` (``load_settings``' answer) for ``key``; a cache that cannot be written costs only
    the next command's time.

    A cache folder refused as unsafe (open to others, another's, a symlink) is the user's to fix and is
    never re-moded: the command goes on (a cache is never a reason to refuse one) with one warning line
    naming the folder and the fix, since otherwise every command would pay the slow path unseen. Other
    write failures (a full or read-only disk) stay silent: they are not the user's setting to change."""
    from dunscaith.adapters.durable.private_dir import (
        MissingHome,
        UnsafeDirectory,
        ensure_private_dir,
        make_missing_dirs,
    )
    from dunscaith.adapters.durable.publish import replace

    path = cache_file(env)
    # the tree as validated, twice: what was set (the typer path validates it again, defaults made again),
    # and every value (the plain paths read it as it is: settings_view.py), with where its paths and tables are
    body = json.dumps({"format": FORMAT, "key": key,
                       "tree": settings.model_dump(mode="json", exclude_unset=True, serialize_as_any=True),
                       "whole": settings.model_dump(mode="json", serialize_as_any=True),
                       "shape": settings_view.shape(settings)}).encode()
    try:
        make_missing_dirs(path.parent.parent)  # ~/.cache: made if missing (never the home), never changed
        replace(ensure_private_dir(path.parent), path.name, body)
    except MissingHome:  # nothing is remembered without a home; the command says what it refuses
        pass
    except UnsafeDirectory as exc:
        print(f"dunscaith: warning: the routing settings are not remembered: {exc}", file=sys.stderr)
    except OSError:
        pass


def plain_settings() -> DunscaithSettings:
    """The validated tree as plain data (``settings_view``), for the paths that run without pydantic:
    remembered for this key, else validated now by ``load_settings`` (BadInput, one line, when wrong)."""
    key = settings_key()
    found = read_cached(key)
    return found if found is not None else _validated_tree(key)


def _validated_tree(key: str) -> DunscaithSettings:
    from dunscaith.entrypoints.dunscaith.root.settings import load_settings

    settings = load_settings()
    if settings_key() == key:  # nothing changed while it was read
        remember(key, settings)
    return settings


def settings_tree() -> DunscaithSettings:
    """The settings tree ``load_settings`` validated, remembered for this key and read back by the same
    model (pydantic, without pydantic-settings and the sources); else validated now, and remembered."""
    key = settings_key()
    obj = _remembered(key, None)
    tree = None if obj is None else obj.get("tree")
    if isinstance(tree, dict):
        from pydantic import ValidationError

        from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings

        try:
            return DunscaithSettings.model_validate(tree)
        except (ValidationError, ValueError, TypeError):
            pass  # not one of ours any more: validated again below
    return _validated_tree(key)
