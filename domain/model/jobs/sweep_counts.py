"""A sweep's elements counted by state, and the one way those counts are said.

``status NAME``, ``list``'s row of a sweep (from the store here, or from the elements' pointers on another
login node), the live view and the supervisor's last line all say the counts in these words, in this order:
the elements that ended well first, then those that ended otherwise, then those still going; within each,
the largest count first (then by the state's word, so the same counts always read the same).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from dunscaith.domain.model.jobs.state import OutcomeKind

_SUCCEEDED = str(OutcomeKind.SUCCEEDED)
_OUTCOMES = frozenset(str(kind) for kind in OutcomeKind)


def _group(state: str) -> int:
    return 0 if state == _SUCCEEDED else 1 if state in _OUTCOMES else 2


def by_state(states: Iterable[str]) -> list[tuple[str, int]]:
    """How many of ``states`` (one per element) say each state, in the order the counts are said."""
    counts = Counter(states)
    return sorted(counts.items(), key=lambda item: (_group(item[0]), -item[1], item[0]))


def counts_words(states: Iterable[str], between: str = ", ") -> str:
    """``480 succeeded, 13 failed, 7 running``: each state's count, in ``by_state``'s order; ``between``
    joins them (the live view's bar uses `` · ``). Empty for no element."""
    return between.join(f"{count} {state}" for state, count in by_state(states))
