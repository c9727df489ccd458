"""PostgreSQL's own keys of the ``[records]`` table (``records.backend = "postgresql"``): the store kind's
settings model (docs/configuration.md, docs/record-backing.md "Timings"), composed into the table by the
settings (``kind.settings_model``)."""

from __future__ import annotations

from pydantic import Field, model_validator

from dunscaith.adapters.kind_settings import Count, Seconds, StoreSettings, StrictSection, UserPath
from dunscaith.domain.model.jobs.lock_timings import require_release_after_detection


class PostgresqlSection(StrictSection):
    """The timings of every session to the server (docs/record-backing.md "Timings"): how soon a holder cut
    off from the server notices (client_*), and how soon the server frees a silent holder's lock (server_*)."""

    connect_timeout: Count = Field(default=10, ge=1, le=3600, description="seconds to reach the server at open")
    client_keepalives_idle: Count = Field(
        default=5, ge=1, le=3600, description="seconds of silence before the holder probes the server"
    )
    client_keepalives_interval: Count = Field(default=2, ge=1, le=3600, description="seconds between those probes")
    client_keepalives_count: Count = Field(default=3, ge=1, le=100, description="probes unanswered before giving up")
    client_user_timeout: Seconds = Field(
        default=10.0,
        ge=1,
        description="seconds a query may go unacknowledged "
        "before it fails: the holder's detection time of a cut network",
    )
    server_keepalives_idle: Count = Field(
        default=10, ge=1, le=3600, description="seconds of silence before the server probes a holder"
    )
    server_keepalives_interval: Count = Field(default=5, ge=1, le=3600, description="seconds between those probes")
    server_keepalives_count: Count = Field(default=6, ge=1, le=100, description="probes unanswered before giving up")
    server_user_timeout: Seconds = Field(
        default=300.0,
        ge=1,
        description="seconds after which the server drops a "
        "silent holder's session and frees its lock: the release time",
    )

    @model_validator(mode="after")
    def _release_after_detection(self) -> PostgresqlSection:
        require_release_after_detection(
            self.server_user_timeout,
            self.client_user_timeout,
            release_name="records.postgresql.server_user_timeout",
            detection_name="records.postgresql.client_user_timeout",
        )
        return self


class PostgresRecords(StoreSettings):
    """PostgreSQL's keys of ``[records]``: the server, the password's file, the sessions' timings."""

    url: str | None = Field(
        default=None,
        description="postgresql: a libpq URL without a password (postgresql://USER@HOST:PORT/DATABASE?sslmode=...)",
    )
    password_file: UserPath | None = Field(
        default=None,
        description="postgresql: a file of yours, mode 0600, whose first line is the password (else ~/.pgpass)",
    )
    postgresql: PostgresqlSection = Field(default_factory=PostgresqlSection)

    @model_validator(mode="after")
    def _a_server_is_named(self) -> PostgresRecords:
        if self.backend == "postgresql" and not self.url:
            raise ValueError("records.backend postgresql needs records.url (postgresql://USER@HOST:PORT/DATABASE)")
        return self
