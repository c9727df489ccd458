"""``list`` as a table (issue 24): a header, aligned columns, cut to the output's width, --format."""

from __future__ import annotations

import pytest

from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import table
from tests.unit.jobs.test_cli_wiring import Wired, invoke, wired

__all__ = ["wired"]  # the fixture, shared with the wiring tests


def _lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _no_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # the captured output is no terminal: whole lines


def test_list_shows_a_header_and_every_column_starts_where_its_header_does(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "a", "--", "true").return_value == 0
    assert invoke(container, "submit", "--name", "a-much-longer-name", "--", "sh", "-c", "exit 3").return_value == 1

    header, *rows = _lines(invoke(container, "list").output)

    assert header.split() == ["NAME", "STATE", "CLUSTER", "AGE", "ELAPSED", "SUPERVISOR", "COMMAND"]
    for title in ("STATE", "CLUSTER", "SUPERVISOR", "COMMAND"):
        at = header.index(title)
        assert all(row[at - 2:at] == "  " and row[at] != " " for row in rows), (title, rows)
    assert rows[0].startswith("a-much-longer-name  failed") and rows[0].endswith("sh -c 'exit 3'")
    assert rows[1].split()[:2] == ["a", "succeeded"] and rows[1].endswith("true")


def test_an_unattended_job_is_marked_in_its_row(wired: Wired) -> None:
    container, scheduler, _ = wired
    scheduler.query = lambda names, **kw: (_ for _ in ()).throw(OSError("controller down"))  # type: ignore
    assert invoke(container, "submit", "--name", "stuck", "--", "true").return_value == 4

    header, row = _lines(invoke(container, "list").output)[:2]

    assert row.startswith("stuck ") and row[header.index("SUPERVISOR"):].startswith("Unattended")


def test_a_line_is_cut_to_COLUMNS_and_kept_whole_when_piped_or_wide(wired: Wired,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    container, _, _ = wired
    command = ["sh", "-c", "echo " + "x" * 100]
    assert invoke(container, "submit", "--name", "long", "--", *command).return_value in (0, 1)

    whole = _lines(invoke(container, "list").output)
    assert whole[1].endswith("x" * 100 + "'")  # piped: nothing cut
    monkeypatch.setenv("COLUMNS", "50")
    narrow = _lines(invoke(container, "list").output)
    assert all(len(line) <= 50 for line in narrow) and narrow[1].endswith("…")
    assert narrow[1][:20] == whole[1][:20]
    assert _lines(invoke(container, "list", "--wide").output)[1].endswith("x" * 100 + "'")


def test_format_shows_the_chosen_columns_in_their_order(wired: Wired) -> None:
    container, _, _ = wired
    assert invoke(container, "submit", "--name", "one", "--", "true").return_value == 0

    header, row = _lines(invoke(container, "list", "--format", "elapsed, NAME,state").output)[:2]

    assert header.split() == ["ELAPSED", "NAME", "STATE"]
    assert row.split()[1:] == ["one", "succeeded"]


def test_an_unknown_format_column_is_refused_in_one_line_with_the_closest_column(wired: Wired) -> None:
    container, _, _ = wired
    with pytest.raises(BadInput) as refused:
        invoke(container, "list", "--format", "name,stat")
    message = str(refused.value)
    assert "no column 'stat' (did you mean state?)" in message and "\n" not in message
    with pytest.raises(BadInput, match="an empty column name"):
        invoke(container, "list", "--format", "name,,state")


def test_no_job_prints_the_header_alone_as_squeue_does(wired: Wired) -> None:
    container, _, _ = wired
    assert [line.split() for line in _lines(invoke(container, "list").output)] == [
        ["NAME", "STATE", "CLUSTER", "AGE", "ELAPSED", "SUPERVISOR", "COMMAND"]]
    assert _lines(invoke(container, "list", "--noheader").output) == []
    assert _lines(invoke(container, "list", "--format", "name,state").output) == ["NAME  STATE"]


# ---------------------------------------------------------------- the pieces


def test_widths_are_the_widest_cell_or_header_and_the_last_column_is_not_padded() -> None:
    sizes = table.widths(["NAME", "STATE"], [["a", "running"], ["longer-name", "held"]])
    assert sizes == [11, 7]
    assert table.aligned(["a", "held"], sizes) == "a            held"
    assert table.aligned(["a-name-wider-than-measured", "x"], sizes) == "a-name-wider-than-measured  x"


def test_cut_keeps_a_line_that_fits_and_ends_a_longer_one_with_an_ellipsis() -> None:
    assert table.cut("abcdef", None) == "abcdef"
    assert table.cut("abcdef", 6) == "abcdef"
    assert table.cut("abcdef", 4) == "abc…"


def test_output_width_is_COLUMNS_when_set_else_none_for_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "72")
    assert table.output_width() == 72
    monkeypatch.setenv("COLUMNS", "wide")
    assert table.output_width() is None  # not a number: as if unset, and pytest's output is no terminal


def test_parse_format_and_age() -> None:
    assert table.parse_format("Name , elapsed") == ("name", "elapsed")
    with pytest.raises(table.UnknownColumn, match="did you mean elapsed"):
        table.parse_format("elapse")
    assert [table.age_text(s) for s in (5, 125, 7200, 3 * 86400)] == ["5s", "2m", "2h", "3d"]


def test_a_control_character_in_a_cell_is_escaped_so_it_cannot_forge_a_line() -> None:
    printed: list[str] = []
    rows = table.Table(["name"], None, printed.append)
    rows.line("j1  damaged: bad\nforged")
    rows.close()
    assert printed == ["NAME", "j1  damaged: bad\\nforged"]


# ---------------------------------------------------------------- status: the command and the scheduler's times


def test_status_shows_the_command_and_the_schedulers_times_beside_the_records(wired: Wired) -> None:
    import json

    container, _, _ = wired
    assert invoke(container, "submit", "--name", "done", "--", "echo", "a b").return_value in (0, 1)

    shown = invoke(container, "status", "done").output
    assert "  command: echo 'a b'" in shown and "(as dunscaith saw them)" in shown
    assert "  scheduler (fake): submitted " in shown
    as_json = json.loads(invoke(container, "status", "done", "--json").output)
    assert as_json["command_line"] == "echo 'a b'" and as_json["scheduler_times"]["source"] == "fake"
    assert as_json["scheduler_times_problem"] is None and list(as_json["attempt_scheduler_times"]) == ["1"]


def test_a_scheduler_that_cannot_say_its_times_leaves_status_as_the_record_says(
        wired: Wired, monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    from collections.abc import Sequence

    from dunscaith.domain.model.jobs.ids import ObjectId
    from dunscaith.domain.model.jobs.objects import ObjectTimes
    from dunscaith.ports.scheduler import SchedulerError

    container, scheduler, _ = wired
    assert invoke(container, "submit", "--name", "done", "--", "true").return_value == 0

    def times(object_ids: Sequence[ObjectId]) -> dict[ObjectId, ObjectTimes]:
        raise SchedulerError("sacct: no answer in time")

    monkeypatch.setattr(scheduler, "times", times)
    shown = invoke(container, "status", "done")
    assert shown.return_value == 0
    assert "  scheduler times: the scheduler was not asked: sacct: no answer in time" in shown.output
    as_json = json.loads(invoke(container, "status", "done", "--json").output)
    assert as_json["scheduler_times"] is None and "no answer in time" in as_json["scheduler_times_problem"]
