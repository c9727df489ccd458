"""Each order's program, made and checked before anything is sent (in the dry run as in the live one)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from dunscaith.domain.model.qdevices.manifest import Manifest, check_circuit
from dunscaith.domain.model.qdevices.programs import (
    PiastqFormat,
    ProgramError,
    aqt_circuit,
    check_repetitions,
    looks_like_json,
    piastq_program,
)
from dunscaith.domain.model.qdevices.sites import SiteName
from dunscaith.ports.circuit_translator import CircuitTranslator, CircuitUnusable


class PreparePrograms:
    def __init__(self, translator: CircuitTranslator, piastq_format: PiastqFormat = PiastqFormat.CUSTOM1) -> None:
        self._translator = translator
        self._piastq_format = PiastqFormat(piastq_format)  # the container hands the setting's text

    def __call__(self, manifest: Manifest, circuits: Mapping[int, str]) -> dict[int, str]:
        """Order index -> the program its job request carries; ProgramError (one line) for the first
        order whose circuit cannot be one."""
        aqt = manifest.site is SiteName.PIASTQ and self._piastq_format is PiastqFormat.CUSTOM1
        programs: dict[int, str] = {}
        for order in manifest.orders:
            where = f"order {order.index} ({order.name}) circuit {order.circuit}"
            text = circuits[order.index]
            if not aqt:
                if looks_like_json(text):
                    takes = ("with piastq.program_format = \"qasm\", piastq" if manifest.site is SiteName.PIASTQ
                             else f"an AQT circuit (JSON) goes to piastq only; {manifest.site.value}")
                    raise ProgramError(f"{where}: {takes} takes OpenQASM")
                check_circuit(text, where)
                programs[order.index] = text
                continue
            if looks_like_json(text):
                try:
                    data = json.loads(text)
                except ValueError as exc:
                    raise ProgramError(f"{where}: not JSON ({exc})") from None
            else:
                check_circuit(text, where)
                try:
                    data = self._translator.openqasm_to_aqt(text)
                except CircuitUnusable as exc:
                    raise ProgramError(f"{where}: {exc}") from None
            circuit = aqt_circuit(data, where)
            check_repetitions(data, order.shots, where)
            programs[order.index] = piastq_program(circuit, order.shots)
        return programs
