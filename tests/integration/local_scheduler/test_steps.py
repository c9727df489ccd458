"""The step log of a local object on real files: the fold's table and the compare-and-set."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.local.steps import Action, Phase, fold, read_steps, step_name, try_append
from dunscaith.domain.model.strict_json import DecodeError

A, P = Action, Phase


@pytest.mark.parametrize(
    ("actions", "phase"),
    [
        ((), P.HELD),
        ((A.RELEASE,), P.PENDING),
        ((A.RELEASE, A.START), P.STARTED),
        ((A.RELEASE, A.HOLD), P.HELD),
        ((A.RELEASE, A.HOLD, A.RELEASE, A.START), P.STARTED),
        ((A.CANCEL,), P.CANCELLED),
        ((A.RELEASE, A.CANCEL), P.CANCELLED),
    ],
)
def test_the_fold_of_every_allowed_sequence(actions: tuple[Action, ...], phase: Phase) -> None:
    assert fold(actions, "here") is phase


@pytest.mark.parametrize(
    "actions",
    [
        (A.START,),  # never started without a release
        (A.HOLD,),
        (A.RELEASE, A.RELEASE),
        (A.RELEASE, A.START, A.CANCEL),  # a started object is cancelled through its process owner
        (A.RELEASE, A.START, A.HOLD),
        (A.CANCEL, A.RELEASE),
    ],
)
def test_a_sequence_this_scheduler_never_writes_is_refused(actions: tuple[Action, ...]) -> None:
    with pytest.raises(DecodeError, match="cannot follow"):
        fold(actions, "here")


def _read(directory: Path) -> object:
    return read_steps(directory, [p.name for p in directory.iterdir()])


def test_two_actors_deciding_from_the_same_reading_cannot_both_win(tmp_path: Path) -> None:
    seen = read_steps(tmp_path, [])

    first = try_append(tmp_path, seen, Action.RELEASE)
    second = try_append(tmp_path, seen, Action.CANCEL)

    assert (first, second) == (True, False)
    assert _read(tmp_path) == read_steps(tmp_path, ["step.1.json"])
    assert read_steps(tmp_path, ["step.1.json"]).phase is Phase.PENDING


def test_a_gap_or_a_damaged_step_is_refused_not_guessed(tmp_path: Path) -> None:
    try_append(tmp_path, read_steps(tmp_path, []), Action.RELEASE)
    (tmp_path / step_name(3)).write_text("{}")
    with pytest.raises(DecodeError, match="gap"):
        _read(tmp_path)

    (tmp_path / step_name(3)).unlink()
    (tmp_path / step_name(2)).write_text('{"format":"dunscaith.local-scheduler.step/1","action":"launch","at":"x"}')
    with pytest.raises(DecodeError, match="not a step"):
        _read(tmp_path)


def test_staging_files_left_by_a_killed_writer_are_not_steps(tmp_path: Path) -> None:
    (tmp_path / ".staging.step.1.json.123.abc").write_text("half")

    assert read_steps(tmp_path, [p.name for p in tmp_path.iterdir()]).phase is Phase.HELD
