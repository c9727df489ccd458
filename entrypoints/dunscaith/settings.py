"""dunscaith's settings (DESIGN §4 "Where things live"): TOML file, then environment, then flags.

``$XDG_CONFIG_HOME/dunscaith/config.toml`` (default ``~/.config/dunscaith/config.toml``), environment
variables prefixed ``DUNSCAITH_`` with ``__`` for nesting (``DUNSCAITH_SUPERVISE__POLL=2``).
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from entrypoints.cli_support import BadInput

LOCAL = "local"


def _default_root() -> Path:
    user = os.environ.get("USER") or pwd.getpwuid(os.geteuid()).pw_name
    return Path("/var/tmp") / f"dunscaith-{user}"


def config_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "dunscaith" / "config.toml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RecordsSettings(_Strict):
    backend: Literal["sqlite", "postgresql"] = Field(
        default="sqlite", description="the job store: sqlite (one file under root, one host) or postgresql "
                                      "(one database every login node shares: records.url)")
    root: Path = Field(default_factory=_default_root)
    url: str | None = Field(default=None, description="postgresql: a libpq URL without a password "
                                                      "(postgresql://USER@HOST:PORT/DATABASE?sslmode=...)")
    password_file: Path | None = Field(default=None, description="postgresql: a file of yours, mode 0600, whose "
                                                                 "first line is the password (else ~/.pgpass)")

    @model_validator(mode="after")
    def _a_server_is_named(self) -> RecordsSettings:
        if self.backend == "postgresql" and not self.url:
            raise ValueError("records.backend postgresql needs records.url (postgresql://USER@HOST:PORT/DATABASE)")
        return self


class SuperviseSection(_Strict):
    poll: float = Field(default=10.0, gt=0, description="seconds between loops and queries of a young job")
    poll_max: float = Field(default=160.0, gt=0, description="the longest interval between queries")
    giveup: float = Field(default=600.0, gt=0, description="stop (exit 4) when the loop cannot advance for this long")
    drain: float = Field(default=30.0, gt=0, description="seconds a drain after a signal may take")
    wait: float = Field(default=300.0, ge=0, description="seconds of work on what is outstanding after the outcome")
    absence: float = Field(default=600.0, gt=0, description="seconds of absence from queries before 'vanished'")


class RecoverySection(_Strict):
    attempts: int = Field(default=3, ge=1, description="attempts in all for node failure, boot failure, preemption")


class EscalationsSection(_Strict):
    command: list[str] = Field(default_factory=list, description="argv given each escalation as JSON on stdin")
    timeout: float = Field(default=10.0, gt=0, description="seconds the command may take")


class CommandsSection(_Strict):
    wait: float = Field(default=60.0, gt=0, description="seconds a job command waits for a live supervisor's answer")


class ResidualSection(_Strict):
    policy: Literal["list", "manual"] = Field(
        default="list", description="list: unknown attempts move to the residual list when the record settles; "
                                    "manual: they escalate and the record waits")


class ForwardingSection(_Strict):
    transport: Literal["openssh", "paramiko"] | None = Field(
        default=None, description="how a command reaches the host that owns a job's record (docs/forwarding.md); "
                                  "default: openssh when an ssh client is installed, else paramiko")
    ssh_config: Path | None = Field(default=None, description="an ssh config file to use instead of ~/.ssh/config")
    heartbeat: float = Field(default=5.0, ge=0.05, le=3600,
                             description="seconds between heartbeats; the other side drains after four are missed")
    connect_timeout: int = Field(default=20, ge=1, description="seconds to connect and log in")
    server_alive: int = Field(default=15, ge=1, description="seconds between the client's keepalives")


class ClusterSettings(_Strict):
    adapter: Literal["local", "slurm"]
    bin_dir: Path | None = None
    env: dict[str, str] = Field(default_factory=dict)
    # Slurm only (docs/slurm.md): none of these changes what a job is, only how the cluster is reached
    clusters: str | None = None
    command_timeout: float = Field(default=60.0, gt=0)
    submit_timeout: float = Field(default=60.0, gt=0)
    accounting: bool | None = None
    workdir: Path | None = None
    coalesce_max_age: float = Field(default=4.0, gt=0)


class DunscaithSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DUNSCAITH_", env_nested_delimiter="__", extra="ignore",
                                      frozen=True)

    records: RecordsSettings = Field(default_factory=RecordsSettings)
    supervise: SuperviseSection = Field(default_factory=SuperviseSection)
    recovery: RecoverySection = Field(default_factory=RecoverySection)
    escalations: EscalationsSection = Field(default_factory=EscalationsSection)
    residual: ResidualSection = Field(default_factory=ResidualSection)
    commands: CommandsSection = Field(default_factory=CommandsSection)
    forwarding: ForwardingSection = Field(default_factory=ForwardingSection)
    clusters: dict[str, ClusterSettings] = Field(default_factory=dict)

    @field_validator("clusters")
    @classmethod
    def _local_always_exists(cls, clusters: dict[str, ClusterSettings]) -> dict[str, ClusterSettings]:
        return {LOCAL: ClusterSettings(adapter="local"), **clusters}

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=config_file()))

    def cluster(self, name: str) -> ClusterSettings:
        found = self.clusters.get(name)
        if found is None:
            known = ", ".join(sorted(self.clusters))
            raise BadInput(f"no cluster named {name!r} (configured: {known}); add [clusters.{name}] to {config_file()}")
        return found


def load_settings(**overrides: Any) -> DunscaithSettings:
    """The settings, or BadInput naming the file or variable that is wrong (one line)."""
    try:
        return DunscaithSettings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadInput(f"configuration: {where}: {first['msg']} "
                       f"(file {config_file()}, or DUNSCAITH_* variables)") from None
    except ValueError as exc:  # a TOML file that does not parse
        raise BadInput(f"configuration file {config_file()}: {exc}") from None
