"""Record lines are exact; manifests are refused with one line naming the problem."""

from __future__ import annotations

from typing import Any

import pytest

from dunscaith.domain.model.qdevices.lines import LineType, decode, encode
from dunscaith.domain.model.qdevices.manifest import ManifestError, check_circuit, parse_manifest
from dunscaith.domain.model.strict_json import DecodeError
from tests.unit.qdevices.lines_kit import Kit


def test_every_line_type_round_trips() -> None:
    kit = Kit().submitting().submitted().status("WAITING").status(None).result().stop("wait")
    kit.add(LineType.RESOLVE, order=1, option="over_limit", job=None, counts_at_limit=True, final=True)
    for line in kit.lines:
        assert decode(encode(line), "l") == line


@pytest.mark.parametrize(("text", "message"), [
    (b'{"type":"nope","at":"2026-01-01T00:00:00+00:00"}', "unknown line type"),
    (b'{"type":"submitting","at":"2026-01-01T00:00:00+00:00","order":1}', "missing field"),
    (b'{"type":"submitting","at":"2026-01-01T00:00:00+00:00","order":1,"name":"a","x":1}', "unexpected field"),
    (b'{"type":"submitting","at":"2026-01-01T00:00:00","order":1,"name":"a"}', "no time zone"),
    (b'{"type":"submitting","at":"yesterday","order":1,"name":"a"}', "not a time"),
    (b'{"type":"submitting","at":"2026-01-01T00:00:00+00:00","order":true,"name":"a"}', "wrong type"),
    (b"[1]", "JSON object"),
])
def test_a_line_that_does_not_match_its_type_exactly_is_refused(text: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode(text, "line 2")


def good() -> dict[str, Any]:
    return {"site": "mqss", "device": "Q5", "limits": {"job_seconds_limit": 60, "budget_seconds": 600},
            "orders": [{"name": "a", "circuit": "a.qasm", "shots": 10}]}


def test_a_good_manifest_parses_with_defaults() -> None:
    m = parse_manifest(good(), "run")
    assert (m.run, m.site.value, m.limits.wait_seconds, m.orders[0].index) == ("run", "mqss", 3600, 1)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d.pop("site"), "missing site"),
    (lambda d: d.update(site="ibm"), "unknown site"),
    (lambda d: d.update(colour="red"), "unknown key"),
    (lambda d: d["limits"].pop("budget_seconds"), "missing budget_seconds"),
    (lambda d: d["limits"].update(job_seconds_limit=0), "at least 1"),
    (lambda d: d["limits"].update(job_seconds_limit="60"), "whole number"),
    (lambda d: d.update(orders=[]), "non-empty list"),
    (lambda d: d["orders"].append(dict(d["orders"][0])), "used twice"),
    (lambda d: d["orders"][0].update(shots=10**9), "max_shots"),
    (lambda d: d["orders"][0].update(name="../x"), "use letters"),
    (lambda d: d["orders"][0].pop("circuit"), "missing circuit"),
])
def test_a_bad_manifest_is_refused_naming_the_problem(change: Any, message: str) -> None:
    data = good()
    change(data)
    with pytest.raises(ManifestError, match=message):
        parse_manifest(data, "run")


def test_a_circuit_that_is_not_openqasm_is_refused() -> None:
    check_circuit("// comment\nOPENQASM 3.0;\n", "c")
    with pytest.raises(ManifestError, match="OpenQASM"):
        check_circuit("print('hi')", "c")
