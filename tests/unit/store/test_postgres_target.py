"""The PostgreSQL store's configuration, without a server: the URL, the password file, the session settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.store.postgres.target import PostgresTarget, SessionTimings, TargetRefused
from dunscaith.ports.job_store import StoreError

PASSWORD = "pw-5f1c-do-not-show-e9a2"
PASSWORD_USER = "secret_user"


def _password_file(tmp_path: Path, text: str = PASSWORD + "\n", mode: int = 0o600) -> Path:
    path = tmp_path / "pg-password"
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_url_carrying_a_password_is_refused_without_showing_it() -> None:
    with pytest.raises(TargetRefused) as caught:
        PostgresTarget.from_settings(f"postgresql://{PASSWORD_USER}:{PASSWORD}@127.0.0.1:5432/db")
    assert PASSWORD not in str(caught.value) and "records.password_file" in str(caught.value)


def test_a_url_that_does_not_parse_is_refused_without_echoing_it() -> None:
    with pytest.raises(TargetRefused) as caught:
        PostgresTarget.from_settings(f"postgresql://u:{PASSWORD}@127.0.0.1:notaport/db?bogus_option=1")
    assert PASSWORD not in str(caught.value)
    with pytest.raises(TargetRefused, match="postgresql://"):
        PostgresTarget.from_settings("mysql://u@h/db")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_password_file_open_to_others_is_refused_naming_its_mode(tmp_path: Path, mode: int) -> None:
    path = _password_file(tmp_path, mode=mode)
    with pytest.raises(TargetRefused) as caught:
        PostgresTarget.from_settings("postgresql://u@127.0.0.1/db", password_file=path)
    assert f"{mode:04o}" in str(caught.value) and "chmod 600" in str(caught.value)
    assert PASSWORD not in str(caught.value)


def test_a_password_file_that_is_a_symlink_missing_or_empty_is_refused(tmp_path: Path) -> None:
    real = _password_file(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(real)
    for path in (link, tmp_path / "missing", _empty(tmp_path)):
        with pytest.raises(TargetRefused, match=r"records\.password_file"):
            PostgresTarget.from_settings("postgresql://u@127.0.0.1/db", password_file=path)


def _empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty"
    path.write_text("\n")
    path.chmod(0o600)
    return path


def test_a_refusal_is_a_store_error_so_the_cli_says_it_in_one_line_with_exit_2() -> None:
    assert issubclass(TargetRefused, StoreError)


def test_the_display_location_names_user_server_port_and_database_and_never_options(tmp_path: Path) -> None:
    target = PostgresTarget.from_settings("postgresql://alice@db1.example.org:6432/recs?sslmode=verify-full",
                                          password_file=_password_file(tmp_path))
    assert target.location() == "postgresql://alice@db1.example.org:6432/recs"
    assert PASSWORD not in repr(target) and PASSWORD not in str(target.password)
    assert target.connect_kwargs()["password"] == PASSWORD  # handed to libpq, and only there


def test_every_session_asks_the_server_for_keepalives_a_user_timeout_and_synced_commits() -> None:
    kwargs = PostgresTarget.from_settings("postgresql://a@h/d").connect_kwargs()
    assert kwargs["keepalives"] == 1 and kwargs["tcp_user_timeout"] == 10_000
    options = kwargs["options"].split()
    for setting in ("tcp_keepalives_idle=10", "tcp_keepalives_interval=5", "tcp_keepalives_count=6",
                    "tcp_user_timeout=300000", "synchronous_commit=on", "idle_session_timeout=0"):
        assert setting in options
    assert "password" not in kwargs


def test_a_server_release_time_not_above_the_holders_detection_time_is_refused() -> None:
    with pytest.raises(ValueError, match="release time"):
        SessionTimings(client_user_timeout=30.0, server_user_timeout=20.0)
