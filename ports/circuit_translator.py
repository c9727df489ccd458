"""Turning an OpenQASM circuit into the gate set a site's machine runs (Piast-Q: AQT's R, RZ, RXX)."""

from __future__ import annotations

from typing import Any, Protocol


class CircuitUnusable(Exception):
    """The circuit cannot be translated; the message says why, in one line."""


class CircuitTranslator(Protocol):
    def openqasm_to_aqt(self, text: str) -> dict[str, Any]:
        """``{"number_of_qubits": N, "quantum_circuit": [operations]}`` of the OpenQASM 2 or 3 ``text`` in
        AQT's gate set, as the site's own client would build it; CircuitUnusable if it cannot be."""
        ...
