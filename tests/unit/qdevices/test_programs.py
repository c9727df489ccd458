"""Each order's program: Piast-Q's AQT circuit as pcss-qapi 0.3.2 sends it, checked before anything is sent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.qdevices.manifest import ManifestError, parse_manifest
from dunscaith.domain.model.qdevices.programs import PiastqFormat, ProgramError, aqt_circuit
from dunscaith.domain.services.qdevices.programs import PreparePrograms
from dunscaith.ports.circuit_translator import CircuitUnusable
from tests.fakes.piastq_server import BELL_AQT

BELL_QASM = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[2];\nh q[0];\ncx q[0],q[1];\nmeasure q -> c;\n'


class Translator:
    def __init__(self, answer: dict[str, Any] | None = None, refusal: str = "") -> None:
        self.answer, self.refusal, self.calls = answer, refusal, 0

    def openqasm_to_aqt(self, text: str) -> dict[str, Any]:
        self.calls += 1
        if self.refusal:
            raise CircuitUnusable(self.refusal)
        assert self.answer is not None
        return self.answer


def manifest(site: str = "piastq", names: tuple[str, ...] = ("o1",), shots: int = 10) -> Any:
    extra = {"project": "p1"} if site == "vlq" else {}
    return parse_manifest({"site": site, "device": "PIAST-Q", **extra,
                           "limits": {"job_seconds_limit": 60, "budget_seconds": 1000},
                           "orders": [{"name": n, "circuit": "c", "shots": shots} for n in names]}, "run")


def test_an_aqt_circuit_given_as_json_is_sent_as_the_program_with_the_orders_shots() -> None:
    programs = PreparePrograms(Translator())(manifest(), {1: json.dumps(BELL_AQT)})
    assert json.loads(programs[1]) == {"repetitions": 10, **BELL_AQT}


def test_openqasm_for_piastq_goes_through_the_translator_and_is_checked_as_json_would_be() -> None:
    translator = Translator(BELL_AQT)
    programs = PreparePrograms(translator)(manifest(), {1: BELL_QASM})
    assert translator.calls == 1 and json.loads(programs[1])["quantum_circuit"] == BELL_AQT["quantum_circuit"]


def test_a_circuit_the_translator_cannot_convert_is_refused_naming_the_order() -> None:
    with pytest.raises(ProgramError, match=r"order 1 \(o1\) circuit c: it cannot be made into AQT's gates"):
        PreparePrograms(Translator(refusal="it cannot be made into AQT's gates: mid-circuit"))(manifest(),
                                                                                               {1: BELL_QASM})


def test_other_sites_take_openqasm_as_it_is_and_refuse_an_aqt_circuit() -> None:
    assert PreparePrograms(Translator())(manifest("mqss"), {1: BELL_QASM}) == {1: BELL_QASM}
    with pytest.raises(ProgramError, match="goes to piastq only"):
        PreparePrograms(Translator())(manifest("mqss"), {1: json.dumps(BELL_AQT)})


def test_with_the_qasm_setting_piastq_takes_openqasm_as_it_is() -> None:
    translator = Translator(BELL_AQT)
    assert PreparePrograms(translator, PiastqFormat.QASM)(manifest(), {1: BELL_QASM}) == {1: BELL_QASM}
    assert translator.calls == 0


def test_repetitions_that_are_not_the_orders_shots_are_refused() -> None:
    with pytest.raises(ProgramError, match="repetitions 5 is not the order's shots 10"):
        PreparePrograms(Translator())(manifest(), {1: json.dumps({"repetitions": 5, **BELL_AQT})})
    with pytest.raises(ProgramError, match="1 to 2000 repetitions"):
        PreparePrograms(Translator())(manifest(shots=2001), {1: json.dumps(BELL_AQT)})


MEASURE = {"operation": "MEASURE"}


@pytest.mark.parametrize(("ops", "qubits", "why"), [
    ([], 2, "a list of 1 to 2000"),
    ([{"operation": "R", "qubit": 0, "phi": 0.0, "theta": 1.0}], 2, "exactly one MEASURE"),
    ([MEASURE, {"operation": "RZ", "qubit": 0, "phi": 1.0}, MEASURE], 2, "exactly one MEASURE"),
    ([{"operation": "H", "qubit": 0}, MEASURE], 2, "'H' is not one of"),
    ([{"operation": "R", "qubit": 0, "phi": 2.5, "theta": 1.0}, MEASURE], 2, r"phi 2.5 is outside \[0, 2\]"),
    ([{"operation": "RXX", "qubits": [0, 1], "theta": 0.7}, MEASURE], 2, r"theta 0.7 is outside \[0, 0.5\]"),
    ([{"operation": "RXX", "qubits": [1, 1], "theta": 0.2}, MEASURE], 2, "two different qubits"),
    ([{"operation": "RZ", "qubit": 3, "phi": 0.1}, MEASURE], 2, "qubit 3, outside number_of_qubits 2"),
    ([{"operation": "RZ", "qubit": 0, "phi": 0.1, "extra": 1}, MEASURE], 2, "unknown extra"),
    ([{"operation": "RZ", "qubit": 0}, MEASURE], 2, "missing phi"),
    ([MEASURE], 0, "number_of_qubits must be"),
    ([{"operation": "RZ", "qubit": True, "phi": 0.1}, MEASURE], 2, "qubit index"),
])
def test_a_circuit_the_sites_model_would_not_take_is_refused(ops: list[Any], qubits: int, why: str) -> None:
    with pytest.raises(ProgramError, match=why):
        aqt_circuit({"number_of_qubits": qubits, "quantum_circuit": ops}, "c")


_op = st.one_of(
    st.fixed_dictionaries({"operation": st.just("R"), "qubit": st.integers(-1, 4),
                           "phi": st.floats(-0.5, 2.5), "theta": st.floats(-0.5, 1.5)}),
    st.fixed_dictionaries({"operation": st.just("RZ"), "qubit": st.integers(-1, 4), "phi": st.floats(-9, 9)}),
    st.fixed_dictionaries({"operation": st.just("RXX"), "qubits": st.lists(st.integers(0, 4), min_size=1, max_size=3),
                           "theta": st.floats(-0.2, 0.7)}),
    st.just(MEASURE),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_op, max_size=6), st.integers(0, 5), st.integers(0, 2001))
def test_the_check_agrees_with_aqt_connectors_own_model(ops: list[Any], qubits: int, shots: int) -> None:
    """The domain's table is aqt-connector 0.3.0's QuantumCircuit model (what the site's client builds)."""
    models = pytest.importorskip("aqt_connector.models.circuits", reason="the piastq extra (aqt-connector)")
    data = {"repetitions": shots, "quantum_circuit": ops, "number_of_qubits": qubits}
    try:
        models.QuantumCircuit.model_validate(data)
        theirs = True
    except Exception:  # ValidationError; a RXX on one qubit twice makes its validator raise TypeError
        theirs = False
    try:
        aqt_circuit(data, "c")
        ours = 1 <= shots <= 2000
    except ProgramError:
        ours = False
    assert ours == theirs, data


def test_a_vlq_order_name_heappe_would_cut_is_refused_before_anything_is_sent() -> None:
    fifty = "a" * 47 + "-01"
    assert manifest("vlq", (fifty,)).orders[0].name == fifty
    with pytest.raises(ManifestError, match="51 characters; vlq keeps a job's name whole up to 50"):
        manifest("vlq", ("a" * 48 + "-01", "a" * 48 + "-02"))
    assert manifest("mqss", ("a" * 64,)).orders[0].name == "a" * 64  # other sites keep 64
