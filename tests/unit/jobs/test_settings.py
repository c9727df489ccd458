"""Settings as DESIGN §4 says: TOML file, then DUNSCAITH_ variables with __ nesting; `local` always exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.store.postgres.settings import PostgresRecords
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.root.settings import load_settings


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import os

    for name in list(os.environ):
        if name.startswith("DUNSCAITH_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("USER", "alice")
    (tmp_path / "dunscaith").mkdir()
    return tmp_path / "dunscaith" / "config.toml"


def test_defaults(config: Path) -> None:
    s = load_settings()
    assert s.records.root == Path("/var/tmp/dunscaith-alice")
    assert (s.supervise.poll, s.supervise.giveup, s.supervise.drain, s.supervise.wait) == (10, 600, 30, 300)
    assert set(s.clusters) == {"local"} and s.clusters["local"].adapter == "local"


def test_the_file_is_read_and_the_environment_wins(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config.write_text('[supervise]\npoll = 2\nwait = 7\n[clusters.big]\nadapter = "slurm"\n'
                      'bin_dir = "/opt/slurm/bin"\nenv = { SLURM_CONF = "/etc/big.conf" }\n')
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "3")
    monkeypatch.setenv("DUNSCAITH_RECORDS__ROOT", "/var/tmp/elsewhere")
    s = load_settings()
    assert (s.supervise.poll, s.supervise.wait) == (3, 7)
    assert s.records.root == Path("/var/tmp/elsewhere")
    assert s.cluster("big").env == {"SLURM_CONF": "/etc/big.conf"}
    assert s.cluster("local").adapter == "local"


@pytest.mark.parametrize(("text", "says"), [
    ("[supervise]\npoll = 0\n", "supervise.poll"),
    ("[supervise]\npolll = 1\n", "supervise.polll"),
    ('[clusters.x]\nadapter = "pbs"\n', "clusters.x.adapter"),
    ('[records]\nbackend = "mongo"\n', "records.backend"),
    ("[supervise\n", "config.toml"),
])
def test_a_bad_file_is_one_line_of_bad_input(config: Path, text: str, says: str) -> None:
    config.write_text(text)
    with pytest.raises(BadInput, match=says.replace(".", r"\.")):
        load_settings()


@pytest.mark.parametrize("name", ["../../escaped", "..", "a/b", ".hidden", "-x", "x y", "", "a" * 64, "é"])
def test_a_cluster_name_follows_the_job_name_rule_where_the_settings_are_read(config: Path, name: str) -> None:
    """Issue 22 item 5: a cluster's name becomes a folder under the record root (slurm-queries/NAME)."""
    config.write_text(f'[clusters."{name}"]\nadapter = "slurm"\n')
    with pytest.raises(BadInput) as raised:
        load_settings()
    line = str(raised.value)
    assert "\n" not in line and line.startswith(f"configuration file {config}: clusters: cluster name")
    assert "use 1 to 63 letters, digits" in line


def test_an_unknown_cluster_names_the_ones_configured(config: Path) -> None:
    with pytest.raises(BadInput, match="configured: local"):
        load_settings().cluster("mars")


def test_postgresql_records_need_a_url_and_take_a_password_file(config: Path) -> None:
    config.write_text('[records]\nbackend = "postgresql"\n')
    with pytest.raises(BadInput, match=r"needs records\.url"):
        load_settings()
    config.write_text('[records]\nbackend = "postgresql"\nurl = "postgresql://alice@db1/recs"\n'
                      'password_file = "~/.config/dunscaith/pg-password"\n')
    records = load_settings().records
    assert isinstance(records, PostgresRecords)  # the table holds every store kind's keys
    # ~ is expanded by the one path rule for every path a user gives (issue 10)
    assert (records.backend, records.url, str(records.password_file)) == (
        "postgresql", "postgresql://alice@db1/recs", str(Path.home() / ".config/dunscaith/pg-password"))
