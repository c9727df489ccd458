"""The shared query in front of a scheduler that makes arrays: it makes arrays too, and only then."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.scheduler.fake import FakeScheduler
from dunscaith.adapters.scheduler.shared_query import SharedArrayQueryScheduler, SharedQueryScheduler, sharing
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome, ObjectSpec, ObjectState
from dunscaith.ports.scheduler import CreatesArrays


class ArraysAsJobs(FakeScheduler):
    """A fake that makes an array as one held object per element (enough to see the calls pass through)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrays: list[tuple[str, list[int], int | None]] = []

    def array_refusal(self, count: int, largest_index: int, scripts: Sequence[str | None] = ()) -> str | None:
        return "too many" if count > 10 else None

    def create_array_held(self, sweep: JobId, elements: Sequence[tuple[int, ObjectSpec]],
                          max_running: int | None) -> CreateAnswer:
        self.arrays.append((sweep, [i for i, _ in elements], max_running))
        for _, spec in elements:
            self.create_held(spec)
        return CreateAnswer(CreateOutcome.CREATED, ObjectId(f"array-{len(self.arrays)}"))

    def task_object(self, array_id: ObjectId, index: int) -> ObjectId:
        return ObjectId(f"{array_id}.{index}")


def test_sharing_makes_arrays_exactly_when_what_it_wraps_does(tmp_path: Path) -> None:
    from dunscaith.adapters.scheduler.local import LocalScheduler  # one object per element, never an array

    plain = sharing(LocalScheduler(tmp_path / "records"), tmp_path / "a", FakeClock())
    assert type(plain) is SharedQueryScheduler and not isinstance(plain, CreatesArrays)
    arrays = sharing(ArraysAsJobs(), tmp_path / "b", FakeClock())
    assert isinstance(arrays, SharedArrayQueryScheduler) and isinstance(arrays, CreatesArrays)
    with pytest.raises(TypeError, match="makes no arrays"):
        SharedArrayQueryScheduler(LocalScheduler(tmp_path / "records"), tmp_path / "c", FakeClock())


def test_array_calls_pass_through_and_the_next_query_asks_afresh(tmp_path: Path) -> None:
    inner, clock = ArraysAsJobs(), FakeClock()
    shared = sharing(inner, tmp_path / "cache", clock)
    assert isinstance(shared, SharedArrayQueryScheduler)
    names = [JobId("sw-1"), JobId("sw-2")]
    assert shared.query(names, confirm_absent=True).objects == ()  # asked once: nothing yet
    assert shared.array_refusal(11, 10) == "too many" and shared.array_refusal(2, 2) is None
    specs = [(i, ObjectSpec(JobId(f"sw-{i}"), Nonce("n"), command=("true",))) for i in (1, 2)]
    answer = shared.create_array_held(JobId("sw"), specs, 1)
    assert (answer.outcome, answer.object_id) == (CreateOutcome.CREATED, "array-1")
    assert inner.arrays == [("sw", [1, 2], 1)] and shared.task_object(ObjectId("array-1"), 2) == "array-1.2"
    # the answer cached before the create is not used: the elements' objects are seen at once
    found = shared.query(names, confirm_absent=True).objects
    assert sorted((v.name, v.state) for v in found) == [("sw-1", ObjectState.HELD), ("sw-2", ObjectState.HELD)]
