"""Issue 21: no entrypoint module reaches into an adapter provider outside the composition roots.

A command asks its container for a use case; the use case got its ports in its constructor. The one
adapter a command touches itself is the signal handling it installs first and restores last (the drain).
This reads every entrypoint module's syntax tree and lists each ``….adapters.<provider>`` or
``adapters(ctx).<provider>`` it finds outside the roots."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENTRYPOINTS = REPO / "entrypoints"
# The composition roots, one per program, where adapters are wired: a package (every module in it) or a
# module. pyproject's import-linter contract and docs/architecture.md name the same four (checked below).
ROOTS = {
    "dunscaith/root/": "the dunscaith CLI",
    "qdevices/root/": "the qdevices CLI",
    "dunscaith/remote_run.py": "the process owner",
    "dunscaith/forwarding_root.py": "the forwarded side",
}


def _in_a_root(where: str) -> bool:
    return any(where == root or (root.endswith("/") and where.startswith(root)) for root in ROOTS)


def _as_module(root: str) -> str:
    """A root as the import-linter contract names it: ``dunscaith.entrypoints.<path>`` (``.**`` for a package)."""
    dotted = "dunscaith.entrypoints." + root.removesuffix("/").removesuffix(".py").replace("/", ".")
    return dotted + ".**" if root.endswith("/") else dotted
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
        if _in_a_root(where):
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


def test_the_roots_are_the_ones_pyproject_and_the_architecture_name() -> None:
    """Issue 37: the import-linter exceptions for entrypoints -> adapters name only the roots, and the three
    lists of them (the contract's, ROOTS, docs/architecture.md's) agree."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"]
                  if c.get("source_modules") == ["dunscaith.entrypoints"] and c["type"] == "forbidden"]
    excepted = {line.split(" -> ")[0] for line in contract["ignore_imports"]}
    assert excepted == {_as_module(root) for root in ROOTS}
    assert {line.split(" -> ")[1] for line in contract["ignore_imports"]} == {"dunscaith.adapters.**"}
    docs = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = docs.split("## The composition roots", 1)[1].split("\n## ", 1)[0]
    for root in ROOTS:
        assert f"`entrypoints/{root}`" in section, root
    for root in ROOTS:  # each one exists
        assert (ENTRYPOINTS / root).exists(), root
