"""QiskitAqtTranslator: OpenQASM to an AQT circuit with qiskit and qiskit-aqt-provider, the libraries
Piast-Q's client (pcss-qapi 0.3.2, which pins qiskit-aqt-provider 1.15.0) builds its circuits with.

The circuit is read by qiskit (``qasm2.loads``, or ``qasm3.loads`` for OpenQASM 3), transpiled for
AQT's offline target (its R/RZ/RXX basis and its passes that keep each angle in the range AQT's API
takes) with a fixed seed, so a resume makes the same program, and converted by
``qiskit_aqt_provider.circuit_to_aqt.qiskit_to_aqt_circuit``. The libraries are an optional extra
(``dunscaith[piastq]``) and are imported only here, only when an OpenQASM order goes to Piast-Q.
"""

from __future__ import annotations

import warnings
from typing import Any

from dunscaith.ports.circuit_translator import CircuitUnusable

EXTRA = "pip install 'dunscaith[piastq]'"
SEED = 0  # the transpiler's choices are seeded: the same circuit makes the same program every time


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] + ("…" if len(text) > 300 else "")


class QiskitAqtTranslator:
    def openqasm_to_aqt(self, text: str) -> dict[str, Any]:
        # qiskit 1.x and qiskit-aqt-provider 1.15 warn of their own deprecations; none is the user's to act on
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return self._convert(text)

    def _convert(self, text: str) -> dict[str, Any]:
        try:
            from qiskit import qasm2, qasm3, transpile
            from qiskit_aqt_provider import AQTProvider
            from qiskit_aqt_provider.circuit_to_aqt import qiskit_to_aqt_circuit
        except ImportError as exc:
            raise CircuitUnusable(f"an OpenQASM circuit for piastq is converted to AQT's gates by qiskit-aqt-provider, "
                                  f"which is not installed ({exc.name}): {EXTRA}, or give the AQT circuit as JSON"
                                  ) from None
        three = text.lstrip("\ufeff \t\r\n").startswith("OPENQASM 3")
        try:
            circuit = qasm3.loads(text) if three else qasm2.loads(
                text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
        except ImportError as exc:  # qasm3.loads needs qiskit-qasm3-import
            raise CircuitUnusable(f"OpenQASM 3 needs qiskit-qasm3-import ({exc}): {EXTRA}") from None
        except Exception as exc:  # qiskit's parsers raise their own error types, each a plain message
            raise CircuitUnusable(f"qiskit cannot read it: {_one_line(exc)}") from None
        try:
            backend = AQTProvider("not-a-token").get_backend("offline_simulator_no_noise")
            transpiled = transpile(circuit, backend, seed_transpiler=SEED)
            assert not isinstance(transpiled, list)  # one circuit in, one out
            operations = qiskit_to_aqt_circuit(transpiled)
        except Exception as exc:  # ValueError for a mid-circuit measurement, TranspilerError, ...
            raise CircuitUnusable(f"it cannot be made into AQT's gates: {_one_line(exc)}") from None
        return {"number_of_qubits": int(transpiled.num_qubits),
                "quantum_circuit": operations.model_dump()}
