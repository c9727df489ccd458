"""The small ports of a live call: what it prints, the user's rules (a signal: ``ports.interrupts``)."""

from __future__ import annotations

from typing import Any, Protocol


class Reporter(Protocol):
    def say(self, text: str) -> None:
        """One line for the user. Never raises: a closed pipe or terminal is passed over."""
        ...


class RulesUnusable(Exception):
    """The user's rules cannot be loaded; the message names the file and says why."""


class UserRules(Protocol):
    def before_order(self, order: dict[str, Any]) -> str | None:
        """Why this order may not be sent, or None."""
        ...

    def after_result(self, order: dict[str, Any]) -> str | None: ...

    def on_refusal(self, order: dict[str, Any]) -> bool:
        """True to let the run go on after this refused order."""
        ...
