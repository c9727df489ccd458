"""The rule between the supervisor's two poll intervals (docs/configuration.md, [supervise]).

``poll`` is the interval of a young job's loop and the first between queries; ``poll_max`` the longest
the backoff grows to. A first interval longer than the longest is a contradiction: the supervisor would
silently use ``poll`` for both, so it is refused, naming both, as given.
"""

from __future__ import annotations


class UnsoundPollTimings(ValueError):
    """poll exceeds poll_max; the message names both, as given."""


def require_poll_within_max(poll: float, poll_max: float, *, poll_name: str = "poll",
                            poll_max_name: str = "poll_max") -> None:
    if poll > poll_max:
        raise UnsoundPollTimings(
            f"{poll_name} ({poll:g} s) is longer than {poll_max_name} ({poll_max:g} s): {poll_name} is the first "
            f"interval between queries and {poll_max_name} the longest; make {poll_name} at most {poll_max_name}")
