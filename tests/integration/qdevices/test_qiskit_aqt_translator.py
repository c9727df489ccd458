"""QiskitAqtTranslator with the real qiskit and qiskit-aqt-provider 1.15.0 (the piastq extra, which the
test setup installs): OpenQASM in, a program aqt-connector's own model accepts out, or one clear line."""

from __future__ import annotations

import pytest

from dunscaith.adapters.circuits.qiskit_aqt import QiskitAqtTranslator
from dunscaith.domain.model.qdevices.programs import aqt_circuit
from dunscaith.ports.circuit_translator import CircuitUnusable

pytestmark = pytest.mark.slow  # qiskit's import and transpiler take seconds
models = pytest.importorskip("aqt_connector.models.circuits", reason="the piastq extra: pip install '.[piastq]'")

HEAD2 = 'OPENQASM 2.0;\ninclude "qelib1.inc";\n'
BELL2 = HEAD2 + "qreg q[2];\ncreg c[2];\nh q[0];\ncx q[0],q[1];\nmeasure q -> c;\n"
GHZ3 = ('OPENQASM 3.0;\ninclude "stdgates.inc";\nqubit[3] q;\nbit[3] c;\nh q[0];\ncx q[0], q[1];\n'
        "cx q[1], q[2];\nc = measure q;\n")


@pytest.fixture(scope="module")
def translator() -> QiskitAqtTranslator:
    return QiskitAqtTranslator()


@pytest.mark.parametrize(("text", "qubits"), [(BELL2, 2), (GHZ3, 3)])
def test_openqasm_2_and_3_become_a_program_the_sites_own_model_accepts(translator: QiskitAqtTranslator,
                                                                      text: str, qubits: int) -> None:
    made = translator.openqasm_to_aqt(text)
    assert made["number_of_qubits"] == qubits
    assert {op["operation"] for op in made["quantum_circuit"]} <= {"R", "RZ", "RXX", "MEASURE"}
    models.QuantumCircuit.model_validate({"repetitions": 100, **made})  # what pcss-qapi would send
    aqt_circuit(made, "c")  # and the domain's check agrees


def test_the_same_circuit_makes_the_same_program_every_time(translator: QiskitAqtTranslator) -> None:
    assert translator.openqasm_to_aqt(BELL2) == QiskitAqtTranslator().openqasm_to_aqt(BELL2)


@pytest.mark.parametrize(("text", "why"), [
    (HEAD2 + "qreg q[1];\ncreg c[1];\nmeasure q[0] -> c[0];\nh q[0];\nmeasure q[0] -> c[0];\n",
     "cannot be made into AQT's gates"),
    (HEAD2 + "qreg q[1];\nfoo q[0];\n", "qiskit cannot read it"),
    (HEAD2 + "qreg q[1];\ncreg c[1];\nh q[0];\n", "cannot be made into AQT's gates"),  # no measurement
])
def test_a_circuit_that_cannot_be_converted_is_refused_in_one_line(translator: QiskitAqtTranslator, text: str,
                                                                   why: str) -> None:
    with pytest.raises(CircuitUnusable, match=why) as caught:
        translator.openqasm_to_aqt(text)
    assert "\n" not in str(caught.value)
