"""The one way a sweep's counts by state are said (domain/model/jobs/sweep_counts.py): status NAME, list's
row of a sweep here and from another host's pointers, the live view and the supervisor's last line."""

from __future__ import annotations

from dunscaith.domain.model.jobs.sweep_counts import by_state, counts_words


def test_ended_well_first_then_ended_otherwise_then_still_going_each_largest_first() -> None:
    states = ["running"] * 420 + ["succeeded"] * 80 + ["failed"] * 3 + ["cancelled"] * 5 + ["held"] * 420

    assert by_state(states) == [("succeeded", 80), ("cancelled", 5), ("failed", 3), ("held", 420),
                                ("running", 420)]
    assert counts_words(states) == "80 succeeded, 5 cancelled, 3 failed, 420 held, 420 running"


def test_the_same_counts_always_read_the_same_whatever_the_order_of_the_elements() -> None:
    assert counts_words(["running", "failed", "succeeded", "running"]) == \
        counts_words(["succeeded", "running", "running", "failed"]) == "1 succeeded, 1 failed, 2 running"


def test_the_live_view_joins_them_with_its_own_separator_and_no_element_says_nothing() -> None:
    assert counts_words(["succeeded", "running", "running"], " · ") == "1 succeeded · 2 running"
    assert counts_words([]) == "" and by_state([]) == []
