"""Issue 22 item 15: a rules file is run from its source; nothing is written beside it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dunscaith.adapters.rules.python_file import PythonRulesFile
from dunscaith.ports.run_io import RulesUnusable


def test_loading_a_rules_file_leaves_no_pycache_beside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as a user's shell has it
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    folder = tmp_path / "rules"
    folder.mkdir()
    path = folder / "rules.py"
    path.write_text("import json\n\ndef before_order(order):\n    return 'no' if order['shots'] > 5 else None\n")
    rules = PythonRulesFile(path)
    assert rules.before_order({"shots": 9}) == "no" and rules.before_order({"shots": 1}) is None
    assert sorted(p.name for p in folder.iterdir()) == ["rules.py"]


def test_an_error_in_the_rules_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "rules.py"
    path.write_text("x = 1\ndef before_order(order):\n    raise ValueError('from the rules')\n")
    rules = PythonRulesFile(path)
    with pytest.raises(ValueError) as caught:
        rules.before_order({})
    frame = caught.traceback[-1]
    assert str(frame.path) == str(path) and frame.lineno + 1 == 3


@pytest.mark.parametrize(("text", "says"), [("def (:\n", "SyntaxError"), ("import sys\nsys.exit(4)\n", "sys.exit(4)")])
def test_a_rules_file_that_cannot_be_used_is_one_clear_refusal(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "rules.py"
    path.write_text(text)
    with pytest.raises(RulesUnusable, match=says.replace("(", r"\(").replace(")", r"\)")):
        PythonRulesFile(path)
    assert not (tmp_path / "__pycache__").exists()
    with pytest.raises(RulesUnusable, match="no such file"):
        PythonRulesFile(tmp_path / "missing.py")
