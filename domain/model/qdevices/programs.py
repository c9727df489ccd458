"""What an order sends as its program, per site: OpenQASM text, or Piast-Q's AQT circuit.

Piast-Q's own client (pcss-qapi 0.3.2, ``PIAST_Q.submit``) posts ``"format": "custom1"`` with an AQT
circuit as JSON: ``{"repetitions", "quantum_circuit": [operations], "number_of_qubits"}``, the model
of aqt-connector 0.3.0 (``aqt_connector.models.circuits.QuantumCircuit``), which its qiskit-aqt-provider
1.15.0 builds. This module holds that model's rules as a table, so a circuit the site's client would
not build is refused before anything is sent; tests hold the table against aqt-connector itself.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.qdevices.manifest import ManifestError


class ProgramError(ManifestError):
    """The order's circuit cannot be made into what its site takes; the message says why."""


class PiastqFormat(StrEnum):
    CUSTOM1 = "custom1"  # what pcss-qapi 0.3.2 sends: an AQT circuit as JSON (the default)
    QASM = "qasm"  # OpenQASM text as qasm2/qasm3: only behind a setting that names its evidence


# aqt-connector 0.3.0's limits (QuantumCircuit, Circuit, GateR/GateRZ/GateRXX).
MAX_REPETITIONS = 2000
MAX_QUBITS = 31
MAX_OPERATIONS = 2000
# operation -> {field: (low, high) or None for a qubit index or pair}; bounds in units of pi, inclusive
_OPERATIONS: dict[str, dict[str, tuple[float, float] | None]] = {
    "R": {"qubit": None, "phi": (0.0, 2.0), "theta": (0.0, 1.0)},
    "RZ": {"qubit": None, "phi": (-math.inf, math.inf)},
    "RXX": {"qubits": None, "theta": (0.0, 0.5)},
    "MEASURE": {},
}


@dataclass(frozen=True, slots=True)
class AqtCircuit:
    number_of_qubits: int
    operations: tuple[Mapping[str, Any], ...]

    def program(self, shots: int) -> dict[str, Any]:
        """The ``program`` of Piast-Q's job request, key for key as pcss-qapi sends ``model_dump()``."""
        return {"repetitions": shots, "quantum_circuit": [dict(op) for op in self.operations],
                "number_of_qubits": self.number_of_qubits}


def looks_like_json(text: str) -> bool:
    return text.lstrip("\ufeff \t\r\n").startswith("{")


def _number(value: Any, where: str, bounds: tuple[float, float]) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ProgramError(f"{where} must be a finite number, not {value!r}")
    low, high = bounds
    if not low <= value <= high:
        raise ProgramError(f"{where} {value} is outside [{low:g}, {high:g}] (units of pi)")
    return float(value)


def _qubit(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProgramError(f"{where} must be a qubit index (a whole number from 0), not {value!r}")
    return value


def _operation(raw: Any, where: str) -> tuple[dict[str, Any], set[int]]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("operation"), str):
        raise ProgramError(f"{where} must be a table with an 'operation'")
    name = raw["operation"]
    fields = _OPERATIONS.get(name)
    if fields is None:
        raise ProgramError(f"{where}: operation {name!r} is not one of {', '.join(_OPERATIONS)}")
    extra = sorted(set(raw) - set(fields) - {"operation"})
    missing = sorted(set(fields) - set(raw))
    if extra or missing:
        what = "; ".join(part for part in (f"unknown {', '.join(extra)}" if extra else "",
                                           f"missing {', '.join(missing)}" if missing else "") if part)
        raise ProgramError(f"{where} ({name}): {what}")
    op: dict[str, Any] = {}
    qubits: set[int] = set()
    for key, bounds in fields.items():
        if key == "qubit":
            op[key] = _qubit(raw[key], f"{where} qubit")
            qubits.add(op[key])
        elif key == "qubits":
            pair = raw[key]
            if not isinstance(pair, list) or len(pair) != 2:
                raise ProgramError(f"{where} qubits must be a list of two qubit indexes")
            op[key] = [_qubit(q, f"{where} qubits") for q in pair]
            if op[key][0] == op[key][1]:
                raise ProgramError(f"{where} qubits must be two different qubits")
            qubits.update(op[key])
        else:
            assert bounds is not None
            op[key] = _number(raw[key], f"{where} {key}", bounds)
    op["operation"] = name
    return op, qubits


def aqt_circuit(data: Any, where: str) -> AqtCircuit:
    """An AQT circuit from its JSON form (a whole ``program``, or one without ``repetitions``)."""
    if not isinstance(data, Mapping):
        raise ProgramError(f"{where}: an AQT circuit is a JSON object")
    extra = sorted(set(data) - {"repetitions", "quantum_circuit", "number_of_qubits"})
    if extra:
        raise ProgramError(f"{where}: unknown key(s) {', '.join(extra)}")
    ops_raw = data.get("quantum_circuit")
    if not isinstance(ops_raw, list) or not 1 <= len(ops_raw) <= MAX_OPERATIONS:
        raise ProgramError(f"{where}: quantum_circuit must be a list of 1 to {MAX_OPERATIONS} operations")
    ops: list[dict[str, Any]] = []
    used: set[int] = set()
    for number, raw in enumerate(ops_raw, start=1):
        op, qubits = _operation(raw, f"{where} operation {number}")
        ops.append(op)
        used |= qubits
    measures = [i for i, op in enumerate(ops) if op["operation"] == "MEASURE"]
    if measures != [len(ops) - 1]:
        raise ProgramError(f"{where}: exactly one MEASURE, as the last operation")
    count = data.get("number_of_qubits")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_QUBITS:
        raise ProgramError(f"{where}: number_of_qubits must be a whole number from 1 to {MAX_QUBITS}")
    if used and max(used) >= count:
        raise ProgramError(f"{where}: an operation addresses qubit {max(used)}, outside number_of_qubits {count}")
    return AqtCircuit(count, tuple(ops))


def check_repetitions(data: Mapping[str, Any], shots: int, where: str) -> None:
    if not 1 <= shots <= MAX_REPETITIONS:
        raise ProgramError(f"{where}: {shots} shots; an AQT circuit takes 1 to {MAX_REPETITIONS} repetitions")
    if "repetitions" in data and data["repetitions"] != shots:
        raise ProgramError(f"{where}: repetitions {data['repetitions']!r} is not the order's shots {shots}")


def piastq_program(circuit: AqtCircuit, shots: int) -> str:
    """The program text an order carries to PiastqSite: its JSON, canonical and compact."""
    return json.dumps(circuit.program(shots), separators=(",", ":"))
