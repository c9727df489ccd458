"""dunscaith's settings (DESIGN §4 "Where things live"): TOML file, then environment, then flags.

``$XDG_CONFIG_HOME/dunscaith/config.toml`` (default ``~/.config/dunscaith/config.toml``), environment
variables prefixed ``DUNSCAITH_`` with ``__`` for nesting (``DUNSCAITH_SUPERVISE__POLL=2``).
"""

from __future__ import annotations

import functools
import os
import pwd
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    create_model,
    field_validator,
    model_validator,
)

from dunscaith.adapters.kind_settings import ClusterSettings as ClusterSettings
from dunscaith.adapters.kind_settings import Count, RecoveryRules, Seconds, StoreSettings, UserPath
from dunscaith.domain.model.forwarding.hidden_flag import FORWARDED_ENV
from dunscaith.domain.model.jobs.names import name_problem
from dunscaith.domain.model.jobs.poll_timings import require_poll_within_max
from dunscaith.domain.model.shown import shown
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.root import kinds
from dunscaith.entrypoints.dunscaith.root.settings_paths import config_file as config_file
from dunscaith.entrypoints.settings_support import (
    deep_merge,
    describe_error,
    environment_values,
    first_error,
    read_toml,
    source_of,
    unknown_variables,
    variable_for,
)

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings

LOCAL = "local"
PREFIX = "DUNSCAITH_"
# Variables with the prefix that are not settings: read by the program itself or by its tests.
# (DUNSCAITH_FORWARDED and DUNSCAITH_FORWARDING__INSTANCES: set by the forwarding side for the command it runs.)
NOT_SETTINGS = ("DUNSCAITH_DEBUG", FORWARDED_ENV, "DUNSCAITH_FORWARDING__INSTANCES")
NOT_SETTINGS_PREFIXES = ("DUNSCAITH_TEST_", "DUNSCAITH_SLURM_TEST_", "DUNSCAITH_PG_TEST_")


def _default_root() -> Path:
    user = os.environ.get("USER") or pwd.getpwuid(os.geteuid()).pw_name
    return Path("/var/tmp") / f"dunscaith-{user}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


if TYPE_CHECKING:
    StoreKind = str
else:  # the store kinds registered (entrypoints/dunscaith/root/kinds.py), as the values records.backend takes
    StoreKind = Literal[tuple(kinds.STORE_KINDS)]


_BACKEND = Field(
    default=next(iter(kinds.STORE_KINDS)),
    description="the job store: sqlite (one file under root, one host) or postgresql (one database every "
                "login node shares: records.url); any other kind registered in kinds.py")


class _RecordsCommon(StoreSettings):
    """What ``[records]`` holds whatever the kind: the kind, and the root of this host's records."""

    backend: StoreKind = _BACKEND
    root: UserPath = Field(default_factory=_default_root)


def _records_settings() -> type[_RecordsCommon]:
    """The ``[records]`` table: its common keys and each registered store kind's own (its package's model,
    ``settings_model()``: PostgreSQL's url, password_file and [records.postgresql]), with their rules."""
    own: list[type[StoreSettings]] = [
        model for name in kinds.STORE_KINDS if (model := kinds.store(name).settings_model()) is not None
    ]
    # one model of them all; _RecordsCommon last, so that its keys come first (backend, root) and its
    # backend, the registered kinds' Literal, is the table's
    bases = cast(Any, (*own, _RecordsCommon))
    made: type[_RecordsCommon] = create_model(
        "RecordsSettings", __base__=bases, __module__=__name__, backend=(StoreKind, _BACKEND)
    )
    return made


if TYPE_CHECKING:
    RecordsSettings = _RecordsCommon
else:
    RecordsSettings = _records_settings()


class SchedulerStateSection(_Strict):
    """``[scheduler_state]``: where this host keeps its schedulers' own state, apart from the records."""

    root: UserPath | None = Field(
        default=None,
        description="this host's scheduler state: the local scheduler's objects (each job's instance folder and "
                    "output), the answers of squeue/qstat every supervisor of the host shares, Grid Engine's "
                    "ledger; default: records.root")


class SuperviseSection(_Strict):
    poll: Seconds = Field(default=10.0, gt=0, description="seconds between loops and queries of a young job")
    poll_max: Seconds = Field(default=160.0, gt=0, description="the longest interval between queries")
    giveup: Seconds = Field(default=600.0, gt=0, description="stop (exit 4) when the loop cannot advance this long")
    drain: Seconds = Field(default=30.0, gt=0, description="seconds a drain after a signal may take")
    wait: Seconds = Field(default=300.0, ge=0, description="seconds of work on what is outstanding after the outcome")
    absence: Seconds = Field(default=600.0, gt=0, description="seconds of absence from queries before 'vanished'")
    exit_code: Literal["dunscaith", "job"] = Field(
        default="dunscaith", description="what submit and supervise exit with once the job has its outcome: "
                                         "dunscaith (0 success, 1 not) or job (the job's own code, 128+n for a "
                                         "signal, as srun does; --job-exit-code)")

    @model_validator(mode="after")
    def _poll_within_max(self) -> SuperviseSection:
        # Only two values given that contradict each other: a poll alone above the default poll_max is a
        # slow supervisor asked for, and the longest interval is then poll itself (the backoff's cap).
        if {"poll", "poll_max"} <= self.model_fields_set:
            require_poll_within_max(self.poll, self.poll_max, poll_name="supervise.poll",
                                    poll_max_name="supervise.poll_max")
        return self


class RecoverySection(RecoveryRules):
    """``[recovery]``: the node-failure policy's attempts, and the opt-in recovery of the known causes
    (on_out_of_memory, on_time_limit, requeue_on_time_limit: each cluster's ``recovery`` table may replace them)."""

    attempts: Count = Field(default=3, ge=1, le=100,
                            description="attempts in all for node failure, boot failure, preemption")


class EscalationsSection(_Strict):
    command: list[str] = Field(default_factory=list, description="argv given each escalation as JSON on stdin")
    timeout: Seconds = Field(default=10.0, gt=0, description="seconds the command may take")

    @field_validator("command")
    @classmethod
    def _program_found_from_anywhere(cls, command: list[str]) -> list[str]:
        # Delivered by whichever supervisor or command runs, from whatever folder it was started in: a
        # relative program would be found (or not) by the current directory of the moment.
        if command and (not command[0].strip() or ("/" in command[0] and not command[0].startswith("/"))):
            raise ValueError(f"the program {shown(command[0])} is relative to whatever folder a supervisor "
                             "starts in: give its absolute path, or a bare name found on PATH")
        return command


class NotifySection(_Strict):
    command: list[str] = Field(default_factory=list,
                               description="argv told when a job or a sweep ends, its --json object on stdin "
                                           "(docs/notifications.md)")
    on: list[str] = Field(default_factory=lambda: ["outcome"],
                          description="what it is told of: outcome, escalation, gave-up")
    timeout: Seconds = Field(default=10.0, gt=0, le=600, description="seconds the command may take")

    _program = field_validator("command")(EscalationsSection._program_found_from_anywhere.__func__)  # type: ignore[attr-defined]

    @field_validator("on")
    @classmethod
    def _known_kinds(cls, on: list[str]) -> list[str]:
        from dunscaith.domain.model.jobs.notices import notice_kinds_problem

        problem = notice_kinds_problem(on)
        if problem is not None:
            raise ValueError(problem.removeprefix("notify.on: "))
        return on


class CommandsSection(_Strict):
    wait: Seconds = Field(default=60.0, gt=0, description="seconds a job command waits for a live supervisor's answer")


class ResidualSection(_Strict):
    policy: Literal["list", "manual"] = Field(
        default="list", description="list: unknown attempts move to the residual list when the record settles; "
                                    "manual: they escalate and the record waits")


class ForwardingSection(_Strict):
    transport: Literal["openssh", "paramiko"] | None = Field(
        default=None, description="how a command reaches the host that owns a job's record (docs/forwarding.md); "
                                  "default: openssh when an ssh client is installed, else paramiko")
    ssh_config: UserPath | None = Field(default=None,
                                        description="an ssh config file to use instead of ~/.ssh/config")
    heartbeat: Seconds = Field(default=5.0, ge=0.05, le=3600,
                               description="seconds between heartbeats; the other side drains after four are missed")
    connect_timeout: Count = Field(default=20, ge=1, le=3600, description="seconds to connect and log in")
    server_alive: Count = Field(default=15, ge=1, le=3600, description="seconds between the client's keepalives")


class _AnyCluster(ClusterSettings):
    """A ``[clusters.NAME]`` table of any kind (adapters/kind_settings.py): each kind's package has its own
    model, registered with the kind (entrypoints/dunscaith/root/kinds.py), and the table is validated by the
    model its ``adapter`` names."""

    @classmethod
    def every_key(cls) -> type[BaseModel]:
        """One model holding the keys of every kind, for what reads the settings' shape (a misspelt
        variable's nearest name, the documented keys) rather than one table's values."""
        models = kinds.cluster_models()
        merged: dict[str, Any] = {}
        for kind in models.values():
            for name, info in kind.model_fields.items():
                merged.setdefault(name, (info.annotation, info))
        merged["adapter"] = (str, Field(description="the scheduler adapter: " + ", ".join(models)))
        return create_model("AnyClusterSettings", __base__=_Strict, **merged)


_STRICT = "strict"  # the validation context's key: whether the source is validated strictly (a file)


def _built_in_local() -> ClusterSettings:
    return kinds.cluster_models()[LOCAL](adapter=LOCAL)


def _of_its_kind(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    if isinstance(value, ClusterSettings):
        return value
    kind = value.get("adapter") if isinstance(value, Mapping) else None
    models = kinds.cluster_models()
    model = models.get(kind) if isinstance(kind, str) else None
    if model is None:  # no adapter, or one no model is registered for: said of the key, naming the kinds
        named = create_model("ClusterKind", adapter=(Literal[tuple(models)], ...))  # type: ignore[arg-type]
        named.model_validate({"adapter": kind} if isinstance(value, Mapping) else value)
        return handler(value)
    # a kind's table is validated as strictly as the source it came from (_validate's context: a file's)
    return model.model_validate(value, strict=bool(info.context and info.context.get(_STRICT)))


if TYPE_CHECKING:  # a table of any kind, each kind's model a subclass
    ClusterTable = ClusterSettings
else:  # declared as _AnyCluster, whose every_key the settings' shape reads (settings_support._field_model)
    ClusterTable = Annotated[_AnyCluster, WrapValidator(_of_its_kind)]


def _cluster_name(name: str) -> str:
    # a cluster's name becomes a folder under the record root: "../../x" must never reach one
    problem = name_problem("cluster name", name)
    if problem is not None:
        raise ValueError(problem)
    return name


ClusterName = Annotated[str, AfterValidator(_cluster_name)]


class DunscaithSettings(_Strict):
    """Every setting, validated from exactly the values given (no source of its own): see load_settings."""

    records: RecordsSettings = Field(default_factory=RecordsSettings)
    scheduler_state: SchedulerStateSection = Field(default_factory=SchedulerStateSection)
    supervise: SuperviseSection = Field(default_factory=SuperviseSection)
    recovery: RecoverySection = Field(default_factory=RecoverySection)
    escalations: EscalationsSection = Field(default_factory=EscalationsSection)
    notify: NotifySection = Field(default_factory=NotifySection)
    residual: ResidualSection = Field(default_factory=ResidualSection)
    commands: CommandsSection = Field(default_factory=CommandsSection)
    forwarding: ForwardingSection = Field(default_factory=ForwardingSection)
    clusters: dict[ClusterName, ClusterTable] = Field(default_factory=dict, validate_default=True)

    @field_validator("clusters")
    @classmethod
    def _local_always_exists(cls, clusters: dict[str, ClusterSettings]) -> dict[str, ClusterSettings]:
        local = _built_in_local()
        if clusters.get(LOCAL, local) != local:
            raise ValueError("the cluster local is built in (this machine, under dunscaith remote run) and "
                             "cannot be redefined: give your cluster another name")
        return {**clusters, LOCAL: local}

    def cluster(self, name: str) -> ClusterSettings:
        found = self.clusters.get(name)
        if found is None:
            known = ", ".join(sorted(self.clusters))
            raise BadInput(f"no cluster named {name!r} (configured: {known}); add [clusters.{name}] to {config_file()}")
        return found


@functools.cache
def _environment() -> type[BaseSettings]:
    """The same settings as pydantic-settings reads them from ``DUNSCAITH_*`` variables (``__`` nests);
    made when the settings are validated, so that a remembered tree is read without pydantic-settings."""
    from pydantic_settings import BaseSettings, SettingsConfigDict

    class _Environment(DunscaithSettings, BaseSettings):
        model_config = SettingsConfigDict(env_prefix=PREFIX, env_nested_delimiter="__", extra="forbid", frozen=True)

    return _Environment


def load_settings(**flags: Any) -> DunscaithSettings:
    """The settings, or BadInput naming the file, variable or flag that is wrong (one line).

    Each source is validated alone first, so an error names the one it is in; then the merge (file,
    then variables, then flags) is validated for what only the whole can say (a rule across keys).
    """
    _home_is_absolute(os.environ)
    path = config_file()
    from_file = read_toml(path)
    unknown_variables(PREFIX, os.environ, DunscaithSettings, NOT_SETTINGS, NOT_SETTINGS_PREFIXES)
    from_env = environment_values(_environment(), PREFIX)
    in_file = f"configuration file {path}"
    # strict: what a file writes has its TOML type, and "3" is not the number 3; a variable's value is a
    # string of its own nature, read as the setting's type
    _validate(from_file, lambda _loc: in_file, strict=True)
    _validate(from_env, lambda loc: f"variable {variable_for(loc, PREFIX, os.environ)}")
    _validate(flags, lambda loc: f"flag {'.'.join(str(p) for p in loc)}")
    by_source = [("flags", dict(flags)), ("env", from_env), ("file", from_file)]

    def merged_source(loc: Any) -> str:
        found = source_of(loc, by_source)
        return {"flags": "flags", "env": f"variable {variable_for(loc, PREFIX, os.environ)}"}.get(found, in_file)

    settings = _validate(deep_merge(from_file, from_env, flags), merged_source, fields_only=False)
    assert settings is not None
    return settings


def _home_is_absolute(env: Mapping[str, str]) -> None:
    """Pointers, the residual list and ``~`` in settings live under HOME: a relative one would put them
    under the current directory, where no other command (and no other login node) finds them."""
    home = env.get("HOME")
    if home is not None and not home.startswith("/"):
        raise BadInput(f"HOME is {shown(home)}, not an absolute path: dunscaith keeps each job's pointer under "
                       "HOME, which every login node must find in one place; set HOME to your home directory "
                       "(HOME=/home/you)")


def _validate(values: Mapping[str, Any], source: Any, *, fields_only: bool = True,
              strict: bool = False) -> DunscaithSettings | None:
    try:
        return DunscaithSettings.model_validate(dict(values), strict=strict, context={_STRICT: strict})
    except ValidationError as exc:
        error = first_error(exc, DunscaithSettings, fields_only=fields_only)
        if error is None:
            return None  # a rule across keys: the merge of every source decides
        raise BadInput(f"{source(error['loc'])}: {describe_error(error, DunscaithSettings, values)}") from None
