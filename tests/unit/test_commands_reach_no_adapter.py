"""Issue 21: no entrypoint module reaches into an adapter provider outside the composition roots.

A command asks its container for a use case; the use case got its ports in its constructor. The one
adapter a command touches itself is the signal handling it installs first and restores last (the drain).
This reads every entrypoint module's syntax tree and lists each ``….adapters.<provider>`` or
``adapters(ctx).<provider>`` it finds outside the roots."""

from __future__ import annotations

import ast
from pathlib import Path

ENTRYPOINTS = Path(__file__).resolve().parents[2] / "entrypoints"
# the composition roots, where adapters are wired (pyproject's import-linter contract names the same)
ROOTS = {"dunscaith/wiring.py", "dunscaith/container.py", "dunscaith/remote_container.py",
         "dunscaith/forwarding_root.py", "dunscaith/remote_run.py", "qdevices/container.py"}
ALLOWED = {"interrupts", "container"}  # the drain's; `.adapters.container` is edge's own accessor


def _reaches(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        via_attribute = isinstance(owner, ast.Attribute) and owner.attr == "adapters"
        via_call = (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                    and owner.func.id == "adapters")
        if (via_attribute or via_call) and node.attr not in ALLOWED:
            found.append((node.lineno, node.attr))
    return found


def test_no_command_reaches_into_an_adapter_provider() -> None:
    reached = {}
    for path in sorted(ENTRYPOINTS.rglob("*.py")):
        where = str(path.relative_to(ENTRYPOINTS))
        if where in ROOTS:
            continue
        found = _reaches(ast.parse(path.read_text(encoding="utf-8")))
        if found:
            reached[where] = found
    assert reached == {}


def test_the_check_finds_a_reach_in() -> None:
    tree = ast.parse("def send(ctx):\n"
                     "    site = container.adapters.sites('mqss')\n"
                     "    adapters(ctx).pointers().write()\n")
    assert _reaches(tree) == [(2, "sites"), (3, "pointers")]
