"""qdevices settings: ``$XDG_CONFIG_HOME/qdevices/config.toml``, then ``QDEVICES_`` variables.

Site addresses are not settings: they are constants of the site adapters.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from entrypoints.cli_support import BadInput


def config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "qdevices" / "config.toml"


def default_records() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "qdevices" / "records"


def state_dir() -> Path:
    """Where the site locks live: ``~/.local/state/qdevices/`` as the seed fixes it."""
    return Path.home() / ".local" / "state" / "qdevices"


class SiteSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Records of another runner (files or folders) that count in this site's budget and open-order check.
    older_records: list[str] = Field(default_factory=list)


class QdevicesSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="QDEVICES_", env_nested_delimiter="__", extra="forbid")

    records: Path = Field(default_factory=default_records)
    poll_seconds: float = Field(default=10.0, gt=0)
    mqss: SiteSettings = Field(default_factory=SiteSettings)
    vlq: SiteSettings = Field(default_factory=SiteSettings)
    piastq: SiteSettings = Field(default_factory=SiteSettings)

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

    def older_records(self) -> dict[str, list[str]]:
        def absolute(entries: list[str]) -> list[str]:
            return [os.path.realpath(os.path.expanduser(e)) for e in entries]

        return {"mqss": absolute(self.mqss.older_records), "vlq": absolute(self.vlq.older_records),
                "piastq": absolute(self.piastq.older_records)}


def load_settings() -> QdevicesSettings:
    try:
        return QdevicesSettings()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "settings"
        raise BadInput(f"configuration ({config_file()} or QDEVICES_ variables): {where}: {first['msg']}") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"configuration {config_file()}: {exc}") from None
