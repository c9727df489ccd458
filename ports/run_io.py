"""The small ports of a live call: what it prints, how it learns of a signal, the user's rules."""

from __future__ import annotations

from typing import Any, Protocol


class Reporter(Protocol):
    def say(self, text: str) -> None:
        """One line for the user. Never raises: a closed pipe or terminal is passed over."""
        ...


class Interrupts(Protocol):
    def pending(self) -> str | None:
        """The name of a signal received (SIGINT, SIGTERM, SIGHUP), or None."""
        ...

    def wait(self, seconds: float) -> str | None:
        """Wait up to ``seconds``; return early with the signal's name when one arrives."""
        ...


class UserRules(Protocol):
    def before_order(self, order: dict[str, Any]) -> str | None:
        """Why this order may not be sent, or None."""
        ...

    def after_result(self, order: dict[str, Any]) -> str | None: ...

    def on_refusal(self, order: dict[str, Any]) -> bool:
        """True to let the run go on after this refused order."""
        ...
