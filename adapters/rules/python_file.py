"""The user's rules file (Python) as ``UserRules``, imported only after the token has left the environment.

A rules file cannot end the call: ``sys.exit`` (or ``exit``, ``quit``) at import is a rules error (exit 2
before the run); inside a rule function it stops the run with a rule stop that says so.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dunscaith.ports.run_io import RulesUnusable


class NoUserRules:
    def before_order(self, order: dict[str, Any]) -> str | None:
        return None

    def after_result(self, order: dict[str, Any]) -> str | None:
        return None

    def on_refusal(self, order: dict[str, Any]) -> bool:
        return False  # the rule refusal: a refused order stops the run


class PythonRulesFile:
    """Optional functions of the file: ``before_order(order)``, ``after_result(order)`` return a
    reason to stop (or None); ``on_refusal(order)`` returns True to let the run go on."""

    def __init__(self, path: Path) -> None:
        # Compiled from its source and run in a fresh module, never imported: an import would leave
        # __pycache__/ beside the user's file, and nothing outside the app's own files is written.
        module = types.ModuleType("qdevices_user_rules")
        module.__file__ = str(path)
        try:
            source = path.read_bytes()
            code = compile(source, str(path), "exec", dont_inherit=True)
            exec(code, module.__dict__)
        except FileNotFoundError:
            raise RulesUnusable(f"rules file {path}: no such file") from None
        except IsADirectoryError:
            raise RulesUnusable(f"rules file {path}: is a folder") from None
        except SystemExit as exc:
            raise RulesUnusable(f"rules file {path}: it calls sys.exit({exc.code!r}) at import; a rules file cannot "
                           "end the call") from None
        except Exception as exc:
            raise RulesUnusable(f"rules file {path}: {type(exc).__name__}: {exc}") from None
        self._before: Callable[[dict[str, Any]], Any] | None = getattr(module, "before_order", None)
        self._after: Callable[[dict[str, Any]], Any] | None = getattr(module, "after_result", None)
        self._refusal: Callable[[dict[str, Any]], Any] | None = getattr(module, "on_refusal", None)

    def before_order(self, order: dict[str, Any]) -> str | None:
        return self._reason("before_order", self._before, order)

    def after_result(self, order: dict[str, Any]) -> str | None:
        return self._reason("after_result", self._after, order)

    def on_refusal(self, order: dict[str, Any]) -> bool:
        if self._refusal is None:
            return False
        try:
            return bool(self._refusal(dict(order)))
        except SystemExit:
            return False  # the rule refusal stops the run, as with no on_refusal

    @staticmethod
    def _reason(name: str, rule: Callable[[dict[str, Any]], Any] | None, order: dict[str, Any]) -> str | None:
        if rule is None:
            return None
        try:
            why = rule(dict(order))
        except SystemExit as exc:
            return f"{name} called sys.exit({exc.code!r}): a rules file cannot end the call"
        return str(why) if why else None
