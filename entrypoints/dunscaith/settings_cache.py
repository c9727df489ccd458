"""What routing and the plain reads need of the settings, without importing pydantic on every command.

A job command for another host's job only needs to know how to reach that host (``forwarding.*``) and
whether the records are a host's own (``records.backend``); a plain ``status JOB`` or ``list`` (the front
door's read path, ``reads.py``) needs little more: the record root, ``supervise.poll``, whether an
escalation command is set, and each cluster's adapter. The settings are still validated by the one
``load_settings`` (pydantic): its answer is remembered in ``$XDG_CACHE_HOME/dunscaith/settings.json``
(``~/.cache/...``), 0600, under a key that is a digest of **everything the answer depends on**: the code
that validates (settings.py, settings_paths.py, settings_support.py, user_paths.py, config_dir.py), the
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
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from dunscaith.entrypoints.dunscaith.settings_paths import cache_file as cache_file
from dunscaith.entrypoints.dunscaith.settings_paths import config_file

if TYPE_CHECKING:
    from dunscaith.entrypoints.dunscaith.settings import DunscaithSettings

FORMAT = 1
PREFIX = "DUNSCAITH_"
_MAX_BYTES = 64 * 1024
_VARIABLE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")  # what expand_user_path may expand
_HERE = Path(__file__).resolve().parent
_VALIDATING_CODE = (_HERE / "settings.py", _HERE / "settings_paths.py", _HERE.parent / "settings_support.py",
                    _HERE.parents[1] / "domain" / "model" / "user_paths.py",
                    _HERE.parents[1] / "adapters" / "durable" / "config_dir.py")


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


class RoutingSettings(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    backend: str  # records.backend
    transport: str | None
    ssh_config: Path | None
    heartbeat: float
    connect_timeout: int
    server_alive: int


class ReadSettings(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    """What the front door's plain ``status``/``list`` read of the settings (``reads.py``), remembered
    beside the routing settings from the same ``load_settings`` answer."""

    routing: RoutingSettings
    root: Path  # records.root
    poll: float  # supervise.poll
    delivering: bool  # escalations.command is set
    clusters: tuple[tuple[str, str], ...]  # each configured cluster's name and adapter

    @property
    def forwarding(self) -> RoutingSettings:
        """``forwarding.*`` (a HopSettings), as ``DunscaithSettings.forwarding``."""
        return self.routing

    @property
    def records(self) -> RecordsPlace:
        """``records.backend`` and ``records.root``, as ``DunscaithSettings.records`` (edge._follow_root)."""
        return RecordsPlace(self.routing.backend, self.root)


class RecordsPlace(NamedTuple):  # not a dataclass: ~0.4 ms less to define on a lean path's start
    backend: str
    root: Path


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


def read_cached(key: str, env: Mapping[str, str] | None = None) -> RoutingSettings | None:
    obj = _remembered(key, env)
    return None if obj is None else _routing_of(obj)


def _routing_of(obj: dict[str, Any]) -> RoutingSettings | None:
    try:
        s = obj["settings"]
        ssh_config = None if s["ssh_config"] is None else Path(s["ssh_config"])
        found = RoutingSettings(s["backend"], s["transport"], ssh_config, float(s["heartbeat"]),
                                int(s["connect_timeout"]), int(s["server_alive"]))
    except (ValueError, KeyError, TypeError):
        return None  # absent, not ours, damaged: validated again
    if not isinstance(found.backend, str) or not (found.transport is None or isinstance(found.transport, str)):
        return None
    return found


def read_cached_reads(key: str, env: Mapping[str, str] | None = None) -> ReadSettings | None:
    """The read path's settings remembered for ``key`` (an answer remembered without them: a miss)."""
    obj = _remembered(key, env)
    routing = None if obj is None else _routing_of(obj)
    if obj is None or routing is None:
        return None
    try:
        r = obj["read"]
        if not isinstance(r["root"], str) or not isinstance(r["delivering"], bool):
            return None
        clusters = tuple((str(name), str(adapter)) for name, adapter in r["clusters"])
        return ReadSettings(routing, Path(r["root"]), float(r["poll"]), r["delivering"], clusters)
    except (ValueError, KeyError, TypeError):
        return None


def read_cached_part(key: str, part: str, env: Mapping[str, str] | None = None) -> tuple[ReadSettings, Any] | None:
    """The read settings and one more part remembered for ``key`` (``"submit"``: ``submit_values``' answer,
    which ``submit_settings.py`` reads); None when either is not remembered."""
    reads = read_cached_reads(key, env)
    obj = None if reads is None else _remembered(key, env)
    if reads is None or obj is None or part not in obj:
        return None
    return reads, obj[part]


def submit_values(settings: DunscaithSettings) -> dict[str, Any]:
    """What the front door's plain submit reads of ``load_settings``' answer, as it is remembered
    (``submit_settings.of_values`` reads it back)."""
    from dunscaith.entrypoints.dunscaith import recovery_rules

    s = settings.supervise
    return {"poll": s.poll, "poll_max": s.poll_max, "giveup": s.giveup, "drain": s.drain, "wait": s.wait,
            "absence": s.absence, "exit_code": s.exit_code, "attempts": settings.recovery.attempts,
            "escalations_command": list(settings.escalations.command),
            "escalations_timeout": settings.escalations.timeout, "residual_policy": settings.residual.policy,
            "notify_command": list(settings.notify.command), "notify_on": list(settings.notify.on),
            "notify_timeout": settings.notify.timeout,
            "recovery": recovery_rules.by_cluster(settings)}  # each cluster's opt-in recovery (recovery_rules.py)


def remember(key: str, found: RoutingSettings, env: Mapping[str, str] | None = None,
             reads: ReadSettings | None = None, submit: dict[str, Any] | None = None,
             tree: dict[str, Any] | None = None) -> None:
    """Keep ``found`` for ``key``; a cache that cannot be written costs only the next command's time.

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
    body = json.dumps({"format": FORMAT, "key": key, "settings": {
        "backend": found.backend, "transport": found.transport,
        "ssh_config": None if found.ssh_config is None else str(found.ssh_config), "heartbeat": found.heartbeat,
        "connect_timeout": found.connect_timeout, "server_alive": found.server_alive},
        **({} if reads is None else {"read": {
            "root": str(reads.root), "poll": reads.poll, "delivering": reads.delivering,
            "clusters": [list(pair) for pair in reads.clusters]}}),
        **({} if submit is None else {"submit": submit}),
        **({} if tree is None else {"tree": tree})}).encode()
    try:
        make_missing_dirs(path.parent.parent)  # ~/.cache: made if missing (never the home), never changed
        replace(ensure_private_dir(path.parent), path.name, body)
    except MissingHome:  # nothing is remembered without a home; the command says what it refuses
        pass
    except UnsafeDirectory as exc:
        print(f"dunscaith: warning: the routing settings are not remembered: {exc}", file=sys.stderr)
    except OSError:
        pass


def routing_settings() -> RoutingSettings:
    """The routing settings, validated by ``load_settings`` (BadInput, one line, when they are wrong)."""
    key = settings_key()
    found = read_cached(key)
    if found is not None:
        return found
    return _validated(key).routing


def read_settings() -> ReadSettings:
    """The plain reads' settings, validated by ``load_settings`` (BadInput, one line, when they are wrong)."""
    key = settings_key()
    found = read_cached_reads(key)
    if found is not None:
        return found
    return _validated(key)


def _validated(key: str) -> ReadSettings:
    return validated(key)[0]


def validated(key: str) -> tuple[ReadSettings, dict[str, Any]]:
    """``load_settings``' answer (the read settings and ``submit_values``), remembered for ``key`` when
    nothing changed while it was read."""
    _, found, submit = _validated_tree(key)
    return found, submit


def _validated_tree(key: str) -> tuple[DunscaithSettings, ReadSettings, dict[str, Any]]:
    from dunscaith.entrypoints.dunscaith.settings import load_settings

    settings = load_settings()
    f = settings.forwarding
    routing = RoutingSettings(settings.records.backend, f.transport, f.ssh_config, f.heartbeat, f.connect_timeout,
                              f.server_alive)
    found = ReadSettings(routing, Path(settings.records.root), settings.supervise.poll,
                         bool(settings.escalations.command),
                         tuple((name, cluster.adapter) for name, cluster in settings.clusters.items()))
    submit = submit_values(settings)
    if settings_key() == key:  # nothing changed while it was read
        # the tree as validated: what was set, each value as validated (a default is made again on reading)
        tree = settings.model_dump(mode="json", exclude_unset=True)
        remember(key, routing, reads=found, submit=submit, tree=tree)
    return settings, found, submit


def settings_tree() -> DunscaithSettings:
    """The settings tree ``load_settings`` validated, remembered for this key and read back by the same
    model (pydantic, without pydantic-settings and the sources); else validated now, and remembered."""
    key = settings_key()
    obj = _remembered(key, None)
    tree = None if obj is None else obj.get("tree")
    if isinstance(tree, dict):
        from pydantic import ValidationError

        from dunscaith.entrypoints.dunscaith.settings import DunscaithSettings

        try:
            return DunscaithSettings.model_validate(tree)
        except (ValidationError, ValueError, TypeError):
            pass  # not one of ours any more: validated again below
    return _validated_tree(key)[0]
