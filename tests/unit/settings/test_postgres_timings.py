"""``[records.postgresql]``: the lock's session timings, validated like every setting and handed to the adapter."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from dunscaith.adapters.store.postgres.settings import PostgresqlSection, PostgresRecords
from dunscaith.adapters.store.postgres.target import PostgresTarget, SessionTimings
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.root import settings as dunscaith_settings
from dunscaith.entrypoints.dunscaith.root.container import Container

URL = "postgresql://alice@127.0.0.1:5432/records"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("DUNSCAITH_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USER", "alice")
    (tmp_path / ".config" / "dunscaith").mkdir(parents=True)
    return tmp_path


def _file(home: Path, text: str) -> None:
    (home / ".config" / "dunscaith" / "config.toml").write_text(
        f'[records]\nbackend = "postgresql"\nurl = "{URL}"\n\n[records.postgresql]\n{text}')


def test_the_defaults_are_the_adapters_own() -> None:
    section = PostgresqlSection()
    assert SessionTimings(**section.model_dump()) == SessionTimings()


def test_timings_from_the_file_reach_the_connection_options(home: Path) -> None:
    _file(home, "client_user_timeout = 3\nserver_user_timeout = 12\nserver_keepalives_idle = 2\n"
                "client_keepalives_count = 4\nconnect_timeout = 7\n")
    settings = dunscaith_settings.load_settings()
    assert isinstance(settings.records, PostgresRecords)  # PostgreSQL's keys: its package's model
    timings = SessionTimings(**settings.records.postgresql.model_dump())
    kwargs = PostgresTarget(URL, timings=timings).connect_kwargs()
    assert kwargs["tcp_user_timeout"] == 3000 and kwargs["keepalives_count"] == 4 and kwargs["connect_timeout"] == 7
    assert "-c tcp_user_timeout=12000" in kwargs["options"] and "-c tcp_keepalives_idle=2" in kwargs["options"]


def test_the_container_opens_the_store_with_the_configured_timings(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(home, "client_user_timeout = 2\nserver_user_timeout = 9\n")
    seen: list[PostgresTarget] = []

    from dunscaith.adapters.store.postgres import store

    def opened(cls: type, target: PostgresTarget) -> SimpleNamespace:
        seen.append(target)
        return SimpleNamespace(read_unlocked=None)  # what the opening reads of the store it opened

    monkeypatch.setattr(store.PostgresStore, "open", classmethod(opened))
    container = Container()
    container.adapters.store()
    (target,) = seen
    assert target.timings.client_user_timeout == 2.0 and target.timings.server_user_timeout == 9.0


@pytest.mark.parametrize(("text", "says"), [
    ("client_user_timeout = 0\n", r"records\.postgresql\.client_user_timeout: must be at least 1, not 0"),
    ("server_user_timeout = inf\n", r"records\.postgresql\.server_user_timeout: a finite number"),
    ("server_user_timeout = 1e300\n", r"records\.postgresql\.server_user_timeout: at most"),
    ("client_keepalives_idle = true\n", r"records\.postgresql\.client_keepalives_idle: "),
    ("client_keepalives_count = 0\n", r"records\.postgresql\.client_keepalives_count: "),
    ("server_keepalives_interval = 2.5\n", r"records\.postgresql\.server_keepalives_interval: "),
    ("server_user_timeout = \"soon\"\n", r"records\.postgresql\.server_user_timeout: "),
    ("user_timeout = 3\n", r"records\.postgresql.*user_timeout"),
])
def test_a_bad_timing_is_one_line_naming_the_key_and_the_file(home: Path, text: str, says: str) -> None:
    _file(home, text)
    with pytest.raises(BadInput, match=says) as caught:
        dunscaith_settings.load_settings()
    assert "\n" not in str(caught.value) and "config.toml" in str(caught.value)


def test_a_release_time_not_above_the_detection_time_is_refused_naming_both(home: Path) -> None:
    _file(home, "client_user_timeout = 20\nserver_user_timeout = 20\n")
    with pytest.raises(BadInput, match=r"server_user_timeout \(20 s\) must exceed .*client_user_timeout \(20 s\)"):
        dunscaith_settings.load_settings()


def test_a_bad_timing_in_a_variable_names_the_variable(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(home, "")
    monkeypatch.setenv("DUNSCAITH_RECORDS__POSTGRESQL__CLIENT_USER_TIMEOUT", "-1")
    with pytest.raises(BadInput, match=r"^variable DUNSCAITH_RECORDS__POSTGRESQL__CLIENT_USER_TIMEOUT: "):
        dunscaith_settings.load_settings()
