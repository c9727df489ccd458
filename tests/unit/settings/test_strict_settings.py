"""Issue 10: settings strict at every level, every mistake one line naming its real source."""

from __future__ import annotations

import os
import re
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from dunscaith.adapters.store.postgres.settings import PostgresRecords
from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith.root import settings as dunscaith_settings
from dunscaith.entrypoints.qdevices.root import settings as qdevices_settings
from dunscaith.entrypoints.settings_support import documented_keys

DOCS = Path(__file__).resolve().parents[3] / "docs"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("DUNSCAITH_", "QDEVICES_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("USER", "alice")
    (tmp_path / ".config" / "dunscaith").mkdir(parents=True)
    (tmp_path / ".config" / "qdevices").mkdir(parents=True)
    return tmp_path


def dunscaith_file(home: Path, text: str) -> Path:
    path = home / ".config" / "dunscaith" / "config.toml"
    path.write_text(text)
    return path


def refused(pattern: str) -> AbstractContextManager[pytest.ExceptionInfo[BadInput]]:
    return pytest.raises(BadInput, match=pattern)


# --- the path rule, through records.root ---------------------------------------------------------

def test_empty_root_from_the_variable_is_refused_naming_the_variable(home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUNSCAITH_RECORDS__ROOT", "")
    with refused(r"^variable DUNSCAITH_RECORDS__ROOT: records\.root: is empty"):
        dunscaith_settings.load_settings()


def test_empty_root_in_the_file_is_refused_naming_the_file(home: Path) -> None:
    path = dunscaith_file(home, '[records]\nroot = ""\n')
    with refused(rf"^configuration file {re.escape(str(path))}: records\.root: is empty"):
        dunscaith_settings.load_settings()


def test_tilde_root_is_the_home_directory_not_a_literal_tilde_folder(home: Path) -> None:
    dunscaith_file(home, '[records]\nroot = "~/dunscaith-records"\n')
    assert dunscaith_settings.load_settings().records.root == home / "dunscaith-records"


def test_variable_in_root_is_expanded_and_an_unset_one_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRATCH", "/scratch/alice")
    dunscaith_file(home, '[records]\nroot = "$SCRATCH/records"\n')
    assert dunscaith_settings.load_settings().records.root == Path("/scratch/alice/records")
    dunscaith_file(home, '[records]\nroot = "${NOT_SET_ANYWHERE}/records"\n')
    with refused(r"records\.root: .*names \$NOT_SET_ANYWHERE, which is not set"):
        dunscaith_settings.load_settings()


def test_relative_root_is_refused(home: Path) -> None:
    dunscaith_file(home, '[records]\nroot = "relative/root"\n')
    with refused(r"records\.root: 'relative/root' is relative: give an absolute path"):
        dunscaith_settings.load_settings()


def test_relative_cluster_paths_are_refused_too(home: Path) -> None:
    dunscaith_file(home, '[clusters.big]\nadapter = "slurm"\nbin_dir = "bin"\n')
    with refused(r"clusters\.big\.bin_dir: 'bin' is relative"):
        dunscaith_settings.load_settings()


# --- unknown tables, keys and variables ----------------------------------------------------------

@pytest.mark.parametrize(("text", "says"), [
    ('[record]\nroot = "/var/tmp/x"\n', r"unknown table \[record\] \(did you mean \[records\]\?\)"),
    ("[supervize]\npoll = 2\n", r"unknown table \[supervize\] \(did you mean \[supervise\]\?\)"),
    ("recods = 1\n", r"recods: unknown key \(did you mean records\?\)"),
    ("[supervise]\npolll = 2\n", r"supervise\.polll: unknown key \(did you mean poll\?\)"),
    ('[clusters.big]\nadapter = "slurm"\nbindir = "/opt"\n',
     r"clusters\.big\.bindir: unknown key \(did you mean bin_dir\?\)"),
])
def test_unknown_tables_and_keys_are_refused_with_the_nearest_name(home: Path, text: str, says: str) -> None:
    path = dunscaith_file(home, text)
    with refused(rf"^configuration file {re.escape(str(path))}: {says}$"):
        dunscaith_settings.load_settings()


def test_config_file_that_is_a_directory_is_refused_dunscaith(home: Path) -> None:
    (home / ".config" / "dunscaith" / "config.toml").mkdir()
    with refused(r"config\.toml is a directory, not a TOML file"):
        dunscaith_settings.load_settings()


def test_config_file_that_is_a_directory_is_refused_qdevices(home: Path) -> None:
    (home / ".config" / "qdevices" / "config.toml").mkdir()
    with refused(r"config\.toml is a directory, not a TOML file"):
        qdevices_settings.load_settings()


def test_a_file_that_is_not_toml_names_the_file_and_line(home: Path) -> None:
    dunscaith_file(home, "[supervise\n")
    with refused(r"config\.toml is not valid TOML: .*line 1"):
        dunscaith_settings.load_settings()


def test_misspelt_dunscaith_variable_is_refused_with_the_nearest(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUNSCAITH_RECORDS__ROT", "/var/tmp/x")
    with refused(r"^variable DUNSCAITH_RECORDS__ROT names no setting \(did you mean DUNSCAITH_RECORDS__ROOT\?\)"):
        dunscaith_settings.load_settings()


def test_misspelt_cluster_key_variable_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUNSCAITH_CLUSTERS__BIG__ADAPTR", "slurm")
    with refused(r"DUNSCAITH_CLUSTERS__BIG__ADAPTR names no setting \(did you mean DUNSCAITH_CLUSTERS__BIG__ADAPTER"):
        dunscaith_settings.load_settings()


def test_misspelt_qdevices_poll_second_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDEVICES_POLL_SECOND", "3")
    with refused(r"^variable QDEVICES_POLL_SECOND names no setting \(did you mean QDEVICES_POLL_SECONDS\?\)"):
        qdevices_settings.load_settings()


def test_the_programs_own_variables_are_not_settings_and_pass(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUNSCAITH_DEBUG", "1")
    monkeypatch.setenv("DUNSCAITH_TEST_CRASH_AT", "x")
    monkeypatch.setenv("QDEVICES_DEBUG", "1")
    dunscaith_settings.load_settings()
    qdevices_settings.load_settings()


def test_clusters_variable_that_is_not_json_is_blamed_on_the_variable(home: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    dunscaith_file(home, "")
    monkeypatch.setenv("DUNSCAITH_CLUSTERS", "notjson")
    with pytest.raises(BadInput) as caught:
        dunscaith_settings.load_settings()
    assert str(caught.value).startswith("variable DUNSCAITH_CLUSTERS does not parse")
    assert "config.toml" not in str(caught.value)


# --- values --------------------------------------------------------------------------------------

def test_poll_true_is_not_taken_as_one(home: Path) -> None:
    dunscaith_file(home, "[supervise]\npoll = true\n")
    with refused(r"supervise\.poll: a number, not true/false"):
        dunscaith_settings.load_settings()


def test_accounting_1_is_not_taken_as_true(home: Path) -> None:
    dunscaith_file(home, '[clusters.big]\nadapter = "slurm"\naccounting = 1\n')
    with refused(r"clusters\.big\.accounting: true or false, not a number"):
        dunscaith_settings.load_settings()


@pytest.mark.parametrize("value", ["inf", "nan", "1e300", "2592001"])
def test_poll_inf_and_1e300_are_refused(home: Path, value: str) -> None:
    dunscaith_file(home, f"[supervise]\npoll = {value}\n")
    with refused(r"supervise\.poll: (a finite number|at most 2592000 seconds)"):
        dunscaith_settings.load_settings()


def test_every_duration_is_bounded(home: Path) -> None:
    for section, key in [("supervise", "giveup"), ("supervise", "wait"), ("supervise", "drain"),
                         ("supervise", "absence"), ("supervise", "poll_max"), ("commands", "wait"),
                         ("escalations", "timeout")]:
        dunscaith_file(home, f"[{section}]\n{key} = 1e300\n")
        with refused(rf"{section}\.{key}: at most"):
            dunscaith_settings.load_settings()


def test_qdevices_poll_seconds_is_bounded_and_not_boolean(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for value, says in [("inf", "a finite number"), ("1e300", "at most"), ("true", "a number, not true/false")]:
        (home / ".config" / "qdevices" / "config.toml").write_text(f"poll_seconds = {value}\n")
        with refused(rf"poll_seconds: {says}"):
            qdevices_settings.load_settings()


def test_local_cluster_cannot_be_redefined(home: Path) -> None:
    dunscaith_file(home, '[clusters.local]\nadapter = "slurm"\n')
    with refused(r"clusters: the cluster local is built in .* cannot be redefined"):
        dunscaith_settings.load_settings()


def test_an_error_in_the_variable_names_the_variable_not_the_file(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dunscaith_file(home, "[supervise]\npoll = 2\n")
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "0")
    with refused(r"^variable DUNSCAITH_SUPERVISE__POLL: supervise\.poll: "):
        dunscaith_settings.load_settings()


def test_a_relative_xdg_config_home_is_ignored_as_the_spec_says(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative")
    assert dunscaith_settings.config_file() == home / ".config" / "dunscaith" / "config.toml"
    assert qdevices_settings.config_file() == home / ".config" / "qdevices" / "config.toml"


# --- docs and accepted keys agree ----------------------------------------------------------------

def _table_keys(page: str) -> set[str]:
    """The first column of the settings tables of a docs page (headed `key` or `setting`): `a`, `b` lists."""
    keys: set[str] = set()
    in_table = False
    for line in (DOCS / page).read_text().splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]] if line.startswith("|") else []
        if not cells:
            in_table = False
        elif cells[0] in ("key", "setting"):
            in_table = True
        elif in_table and not set(cells[0]) <= set("-"):
            keys.update(re.findall(r"`([^`]+)`", cells[0]))
    return keys


def test_documented_keys_are_the_accepted_keys_dunscaith() -> None:
    documented = {key if "." in key else f"clusters.NAME.{key}" for key in _table_keys("configuration.md")}
    slurm = {f"clusters.NAME.{key}" for key in _table_keys("slurm.md") if "." not in key}
    assert documented == documented_keys(dunscaith_settings.DunscaithSettings)
    assert slurm <= documented, "docs/slurm.md lists a cluster key configuration.md does not"


def test_documented_keys_are_the_accepted_keys_qdevices() -> None:
    documented = {k.replace("<site>", site) if "<site>" in k else k
                  for k in _table_keys("qdevices/configuration.md") for site in ("mqss", "vlq", "piastq")}
    assert documented == documented_keys(qdevices_settings.QdevicesSettings)


# --- issue 38: strict types in the file, a wrong-typed table, the source of a rule across keys -----------

@pytest.mark.parametrize(("text", "says"), [
    ('[recovery]\nattempts = "3"\n', r"recovery\.attempts: must be a whole number, not '3' \(a string in TOML: write "
                                     r"the value without quotes\)$"),
    ('[supervise]\npoll = "2"\n', r"supervise\.poll: .*'2'"),
    ('[records.postgresql]\nconnect_timeout = "5"\n', r"records\.postgresql\.connect_timeout: .*'5'"),
    # a cluster's table is its kind's own model, validated as strictly as the file it is in
    ('[clusters.hpc]\nadapter = "slurm"\naccounting = "true"\n', r"clusters\.hpc\.accounting: .*'true'"),
])
def test_a_string_in_the_file_is_not_taken_as_a_number(home: Path, text: str, says: str) -> None:
    path = dunscaith_file(home, text)
    with refused(rf"^configuration file {re.escape(str(path))}: {says}"):
        dunscaith_settings.load_settings()


def test_a_variable_is_still_read_as_the_settings_type(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DUNSCAITH_RECOVERY__ATTEMPTS", "3")
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "2.5")
    monkeypatch.setenv("DUNSCAITH_RECORDS__POSTGRESQL__CONNECT_TIMEOUT", "5")
    settings = dunscaith_settings.load_settings()
    assert (settings.recovery.attempts, settings.supervise.poll) == (3, 2.5)
    assert isinstance(settings.records, PostgresRecords)  # the table holds every store kind's keys
    assert settings.records.postgresql.connect_timeout == 5


def test_numbers_paths_and_tables_of_the_file_still_pass_strictly(home: Path) -> None:
    dunscaith_file(home, '[supervise]\npoll = 2\ngiveup = 60.5\n[recovery]\nattempts = 4\n[records]\nroot = "~/r"\n'
                         '[forwarding]\nssh_config = "~/.ssh/other"\ntransport = "paramiko"\n'
                         '[escalations]\ncommand = ["notify", "-x"]\n')
    settings = dunscaith_settings.load_settings()
    assert (settings.supervise.poll, settings.supervise.giveup, settings.recovery.attempts) == (2.0, 60.5, 4)
    assert settings.records.root == home / "r" and settings.forwarding.ssh_config == home / ".ssh" / "other"


@pytest.mark.parametrize(("text", "variable", "says"), [
    ("records = 5\n", "DUNSCAITH_RECORDS__ROOT", r"records: must be a table, not 5"),
    ("[records]\npostgresql = 5\n", "DUNSCAITH_RECORDS__POSTGRESQL__CONNECT_TIMEOUT", r"records\.postgresql: "),
    ("supervise = []\n", "DUNSCAITH_SUPERVISE__POLL", r"supervise: "),
])
def test_a_table_of_the_wrong_type_in_the_file_is_refused_though_a_variable_sets_a_key_under_it(
        home: Path, monkeypatch: pytest.MonkeyPatch, text: str, variable: str, says: str) -> None:
    path = dunscaith_file(home, text)
    monkeypatch.setenv(variable, "/var/tmp/r" if variable.endswith("ROOT") else "5")
    with refused(rf"^configuration file {re.escape(str(path))}: {says}"):
        dunscaith_settings.load_settings()


def test_a_rule_across_keys_of_the_file_names_the_file_though_a_variable_sets_another_table(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = dunscaith_file(home, "[records.postgresql]\nserver_user_timeout = 5\nclient_user_timeout = 10\n")
    monkeypatch.setenv("DUNSCAITH_RECORDS__ROOT", "/var/tmp/r")
    with refused(rf"^configuration file {re.escape(str(path))}: records\.postgresql\.server_user_timeout \(5 s\) "
                 "must exceed"):
        dunscaith_settings.load_settings()


def test_a_rule_across_keys_broken_by_a_variable_names_the_variable(home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    dunscaith_file(home, "[records.postgresql]\nserver_user_timeout = 5\n")
    monkeypatch.setenv("DUNSCAITH_RECORDS__POSTGRESQL__CLIENT_USER_TIMEOUT", "10")
    with refused(r"^variable DUNSCAITH_RECORDS__POSTGRESQL__CLIENT_USER_TIMEOUT: records\.postgresql\."):
        dunscaith_settings.load_settings()
