from __future__ import annotations

import pytest

from dunscaith.adapters.scheduler.slurm.chunking import MAX_ARGUMENT, chunk


def test_a_thousand_names_fit_in_one_argument() -> None:
    names = [f"job-{i:04d}-{'x' * 30}" for i in range(1000)]
    assert chunk(names) == [names]


def test_chunks_only_by_argument_length_and_keep_every_name_once() -> None:
    names = [f"n{i}" for i in range(100)]
    groups = chunk(names, limit=40)
    assert [n for g in groups for n in g] == names
    assert all(len("--name=" + ",".join(g)) <= 40 for g in groups)
    assert len(groups) > 1


def test_the_default_limit_is_below_linux_single_argument_cap() -> None:
    assert MAX_ARGUMENT < 128 * 1024
    names = [("y" * 99) + str(i) for i in range(3000)]
    groups = chunk(names)
    assert all(len(("--name=" + ",".join(g)).encode()) <= MAX_ARGUMENT for g in groups)
    assert sum(len(g) for g in groups) == 3000 and len(groups) == 4


def test_a_value_too_long_for_any_argument_is_an_error() -> None:
    with pytest.raises(ValueError):
        chunk(["z" * 50], limit=20)


def test_nothing_gives_no_chunks() -> None:
    assert chunk([]) == []
