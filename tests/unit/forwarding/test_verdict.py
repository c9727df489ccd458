"""The verdict table, over every combination of what a session can prove."""

from __future__ import annotations

import itertools

import pytest

from dunscaith.domain.model.forwarding.evidence import Failure, SessionEvidence
from dunscaith.domain.model.forwarding.frames import ExitStatus
from dunscaith.domain.model.forwarding.verdict import (
    MAY_HAVE_RUN_EXIT,
    NEVER_RAN_EXIT,
    CallerEnd,
    Kind,
    Reason,
    Verdict,
    classify,
    may_prompt,
    message,
)

FINALS = [None, ExitStatus(0, 0, "blake3:" + "0" * 64), ExitStatus(255, 3, "blake3:" + "1" * 64)]
FAILURES = [None, *Failure]
CASES = list(itertools.product([False, True], [False, True], FAILURES, [None, 0, 255], [False, True], FINALS,
                               [None, *CallerEnd]))


def oracle(accounted: bool, reached: bool, failure: Failure | None, host_exit: int | None, hello: bool,
           final: ExitStatus | None, end: CallerEnd | None) -> Kind:
    """The rules of seed 000 stated once more, plainly: the table must agree with them everywhere."""
    if final is not None:
        return Kind.COMPLETED
    if hello or end is CallerEnd.SILENT or not accounted:
        return Kind.MAY_HAVE_RUN
    if not reached:
        return Kind.NEVER_RAN  # the command is sent only after authentication
    return Kind.NEVER_RAN if host_exit is not None else Kind.MAY_HAVE_RUN


@pytest.mark.parametrize("case", CASES)
def test_every_combination_agrees_with_the_rules(case: tuple) -> None:  # type: ignore[type-arg]
    accounted, reached, failure, host_exit, hello, final, end = case
    verdict = classify(SessionEvidence(accounted, reached, failure, host_exit, "d"), hello, final, end)
    assert verdict.kind is oracle(*case)
    if verdict.kind is Kind.COMPLETED:
        assert final is not None and verdict.exit_code == final.code
    else:
        assert verdict.exit_code == (NEVER_RAN_EXIT if verdict.kind is Kind.NEVER_RAN else MAY_HAVE_RUN_EXIT)


def test_a_remote_exit_255_in_the_frames_is_the_command_s_own() -> None:
    verdict = classify(SessionEvidence(True, True, None, 255, ""), True, ExitStatus(255, 0, "blake3:" + "0" * 64))
    assert verdict.kind is Kind.COMPLETED and verdict.exit_code == 255


@pytest.mark.parametrize(("failure", "reason"), [(Failure.AUTH, Reason.AUTH),
                                                 (Failure.HOST_KEY_CHANGED, Reason.HOST_KEY_CHANGED),
                                                 (Failure.CONNECTION, Reason.CONNECTION)])
def test_never_ran_names_its_reason_and_says_nothing_ran(failure: Failure, reason: Reason) -> None:
    verdict = classify(SessionEvidence(True, False, failure, None, "why"), False, None)
    assert verdict.reason is reason
    text = message(verdict, "login1", "r" * 32)
    assert text is not None and "nothing ran on login1" in text and "(why)" in text


def test_may_have_run_names_the_recovery_command_and_never_offers_a_retry() -> None:
    verdict = classify(SessionEvidence(True, True, None, None, "Connection to login1 closed by remote host."),
                       True, None)
    text = message(verdict, "login1", "ab" * 16)
    assert text is not None and "MAY HAVE RUN" in text and f"dunscaith forwarded {'ab' * 16}" in text
    assert "does not send it again" in text


@pytest.mark.parametrize("verdict", [classify(SessionEvidence(True, False, f, None, ""), False, None)
                                     for f in Failure] + [Verdict(Kind.MAY_HAVE_RUN, Reason.DROPPED, 6)])
@pytest.mark.parametrize("terminal", [False, True])
def test_a_prompt_only_after_an_authentication_failure_and_only_at_a_terminal(verdict: Verdict,
                                                                              terminal: bool) -> None:
    assert may_prompt(verdict, terminal) == (terminal and verdict.reason is Reason.AUTH)


def test_every_reason_has_a_message() -> None:
    for reason in Reason:
        kind = Kind.COMPLETED if reason is Reason.EXIT_FRAME else Kind.MAY_HAVE_RUN
        text = message(Verdict(kind, reason, 0), "h", "r")
        assert (text is None) == (reason is Reason.EXIT_FRAME)
