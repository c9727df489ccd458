from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.jobs.polling import PollBackoff, next_poll, poll_interval

S = timedelta(seconds=1)


@pytest.mark.parametrize(("age", "interval"), [(0, 5), (39, 5), (40, 10), (80, 20), (320, 80), (640, 160),
                                               (10**7, 160)])
def test_default_backoff(age: int, interval: int) -> None:
    assert poll_interval(age * S) == interval * S


def test_negative_age_is_young() -> None:
    assert poll_interval(-5 * S) == 5 * S


@given(st.integers(0, 10**6), st.integers(0, 10**6))
def test_monotone_bounded_and_a_power_of_two_multiple_of_base(a: int, b: int) -> None:
    backoff = PollBackoff(base=3 * S, cap=100 * S, fraction=0.2)
    ia, ib = poll_interval(a * S, backoff), poll_interval(b * S, backoff)
    if a <= b:
        assert ia <= ib
    assert backoff.base <= ia <= backoff.cap
    ratio = ia / backoff.base
    assert ratio == int(ratio) and int(ratio) & (int(ratio) - 1) == 0


@given(st.integers(0, 10**9), st.sampled_from([5, 10, 20, 40, 80, 160]))
def test_ticks_align_across_intervals(seconds: int, interval: int) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(milliseconds=seconds)
    tick = next_poll(now, interval * S)
    assert now < tick <= now + interval * S
    assert next_poll(tick - timedelta(microseconds=1), 5 * S) == tick  # a longer tick is also a 5 s tick


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        PollBackoff(base=0 * S)
    with pytest.raises(ValueError):
        PollBackoff(base=10 * S, cap=5 * S)


def test_after_a_change_polls_start_at_a_quarter_second_and_double_to_the_base() -> None:
    from dunscaith.domain.model.jobs.polling import poll_delay

    backoff = PollBackoff(base=10 * S, cap=160 * S)
    delays = [poll_delay(k, 0 * S, backoff).total_seconds() for k in range(8)]
    assert delays == [0.25, 0.5, 1, 2, 4, 8, 10, 10]
    assert poll_delay(9, 500 * S, backoff) == 80 * S  # then the age's backoff, as before


@given(st.integers(-100, 10**6), st.integers(0, 10**6))
def test_an_interval_holds_for_every_age_up_to_the_one_it_says_a_longer_one_starts(a: int, more: int) -> None:
    from dunscaith.domain.model.jobs.polling import poll_interval_until

    backoff = PollBackoff(base=3 * S, cap=100 * S, fraction=0.2)
    interval, longer_at = poll_interval_until(a * S, backoff)
    assert interval == poll_interval(a * S, backoff)
    later = a * S + more * S
    if longer_at is None:
        assert poll_interval(later, backoff) == interval  # the longest: it never changes
    elif later < longer_at:
        assert poll_interval(later, backoff) == interval
    else:  # past it, or within a few microseconds before it
        assert poll_interval(later, backoff) >= interval
        assert poll_interval(longer_at + timedelta(milliseconds=1), backoff) > interval
