"""qdevices settings: ``$XDG_CONFIG_HOME/qdevices/config.toml``, then ``QDEVICES_`` variables.

Site addresses are not settings: they are constants of the site adapters.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from dunscaith.adapters.kind_settings import Seconds, UserPath
from dunscaith.domain.model.qdevices.programs import PiastqFormat
from dunscaith.domain.model.user_paths import xdg_home
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.settings_support import (
    deep_merge,
    describe_error,
    environment_values,
    first_error,
    read_toml,
    unknown_variables,
    variable_for,
)

PREFIX = "QDEVICES_"
NOT_SETTINGS = ("QDEVICES_DEBUG",)  # read by the program itself (a traceback on an internal error)
NOT_SETTINGS_PREFIXES = ("QDEVICES_TEST_",)


def _xdg(variable: str, fallback: str) -> Path:
    # the XDG rule's one place (a relative value is ignored), under Path.home() as every qdevices folder
    return Path(xdg_home(variable, fallback, os.environ, str(Path.home())))


def config_file() -> Path:
    return _xdg("XDG_CONFIG_HOME", ".config") / "qdevices" / "config.toml"


def default_records() -> Path:
    return _xdg("XDG_DATA_HOME", ".local/share") / "qdevices" / "records"


def state_dir() -> Path:
    """Where the site locks live: ``~/.local/state/qdevices/`` as the seed fixes it."""
    return Path.home() / ".local" / "state" / "qdevices"


class SiteSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # Records of another runner (files or folders) that count in this site's budget and open-order check.
    older_records: list[UserPath] = Field(default_factory=list)


class PiastqSettings(SiteSettings):
    # What a Piast-Q job request carries: custom1 (an AQT circuit as JSON) is what PCSS's own client,
    # pcss-qapi 0.3.2, sends. qasm (OpenQASM text as qasm2/qasm3) only with the evidence that the site
    # takes it: a PCSS answer, a ticket, a page, named in program_format_evidence.
    program_format: PiastqFormat = PiastqFormat.CUSTOM1
    program_format_evidence: str | None = None

    @model_validator(mode="after")
    def _evidence_for_qasm(self) -> PiastqSettings:
        if self.program_format is PiastqFormat.QASM and not (self.program_format_evidence or "").strip():
            raise ValueError("piastq.program_format = \"qasm\" needs piastq.program_format_evidence: what shows "
                             "that Piast-Q takes OpenQASM (PCSS's own client sends custom1)")
        return self


class QdevicesSettings(BaseModel):
    """Every setting, validated from exactly the values given: see load_settings."""

    model_config = ConfigDict(extra="forbid")

    records: UserPath = Field(default_factory=default_records)
    poll_seconds: Seconds = Field(default=10.0, gt=0)
    mqss: SiteSettings = Field(default_factory=SiteSettings)
    vlq: SiteSettings = Field(default_factory=SiteSettings)
    piastq: PiastqSettings = Field(default_factory=PiastqSettings)

    def older_records(self) -> dict[str, list[str]]:
        def absolute(entries: list[Path]) -> list[str]:
            return [os.path.realpath(e) for e in entries]

        return {"mqss": absolute(self.mqss.older_records), "vlq": absolute(self.vlq.older_records),
                "piastq": absolute(self.piastq.older_records)}


class _Environment(QdevicesSettings, BaseSettings):
    """The same settings as pydantic-settings reads them from ``QDEVICES_*`` variables (``__`` nests)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_nested_delimiter="__", extra="forbid")


def load_settings() -> QdevicesSettings:
    """The settings, or BadInput naming the file or the variable that is wrong (one line)."""
    path = config_file()
    from_file = read_toml(path)
    unknown_variables(PREFIX, os.environ, QdevicesSettings, NOT_SETTINGS, NOT_SETTINGS_PREFIXES)
    from_env = environment_values(_Environment, PREFIX)
    _validate(from_file, lambda _loc: f"configuration file {path}")
    _validate(from_env, lambda loc: f"variable {variable_for(loc, PREFIX, os.environ)}")
    settings = _validate(deep_merge(from_file, from_env), lambda _loc: f"configuration (file {path} with the "
                                                                       f"{PREFIX}* variables)", fields_only=False)
    assert settings is not None
    return settings


def _validate(values: Mapping[str, Any], source: Any, *, fields_only: bool = True) -> QdevicesSettings | None:
    try:
        return QdevicesSettings.model_validate(dict(values))
    except ValidationError as exc:
        error = first_error(exc, QdevicesSettings, fields_only=fields_only)
        if error is None:
            return None
        raise BadInput(f"{source(error['loc'])}: {describe_error(error, QdevicesSettings, values)}") from None
