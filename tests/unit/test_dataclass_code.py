"""The dataclasses' generated methods, compiled once and kept between commands (root/dataclass_code.py):
a class made from the kept code is the class ``dataclasses`` makes; a file that is not exactly ours is
never run."""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dunscaith.entrypoints.dunscaith.root import dataclass_code

SOURCE = """
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0
    tags: tuple[str, ...] = ()

@dataclass(frozen=True, slots=True, kw_only=True)
class Needs:
    cpus: int | None = None
    names: list[str] = field(default_factory=list)
"""


@pytest.fixture
def cache_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as an installed dunscaith runs (no such variable)
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    yield {"HOME": str(home)}
    dataclass_code.uninstall()


def _classes() -> dict[str, Any]:
    module = types.ModuleType("made_here")  # a module of its own, as a class's string annotations need
    sys.modules["made_here"] = module
    try:
        exec(compile(SOURCE, "made_here", "exec"), module.__dict__)  # the classes under test
    finally:
        del sys.modules["made_here"]
    return module.__dict__


def _file(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".cache" / "dunscaith" / dataclass_code.FILE


def _same_class(made: type[Any], plain: type[Any]) -> None:
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        ours, theirs = getattr(made, name).__code__, getattr(plain, name).__code__
        assert (ours.co_code, ours.co_consts, ours.co_names, ours.co_varnames, ours.co_flags) == (
            theirs.co_code,
            theirs.co_consts,
            theirs.co_names,
            theirs.co_varnames,
            theirs.co_flags,
        ), name


def test_kept_code_makes_the_classes_dataclasses_makes(cache_env: dict[str, str]) -> None:
    plain = _classes()
    dataclass_code.install(cache_env)
    first = _classes()
    assert dataclass_code.compiled_here() > 0
    dataclass_code.save()
    assert _file(cache_env).stat().st_mode & 0o777 == 0o600
    dataclass_code.uninstall()
    dataclass_code.install(cache_env)  # as the next command: every text read back, none compiled
    again = _classes()
    assert dataclass_code.compiled_here() == 0 and dataclass_code.kept() > 0
    for made in (first, again):
        for name in ("Point", "Needs"):
            _same_class(made[name], plain[name])
        point = made["Point"](1, tags=("a",))
        assert point == made["Point"](1, 0, ("a",)) and hash(point) == hash(made["Point"](1, 0, ("a",)))
        assert repr(point) == "Point(x=1, y=0, tags=('a',))"
        with pytest.raises(dataclasses.FrozenInstanceError):
            point.x = 2
        assert made["Needs"]().names == [] and made["Needs"](cpus=2).cpus == 2
        with pytest.raises(TypeError):
            made["Needs"](2)


@pytest.mark.parametrize("damage", ["garbage", "other python", "not code", "open to others"])
def test_a_file_not_exactly_ours_is_never_run(cache_env: dict[str, str], damage: str) -> None:
    path = _file(cache_env)
    path.parent.mkdir(parents=True, mode=0o700)
    evil = compile("raise SystemExit('ran a foreign cache')", "<string>", "exec")
    dataclass_code.install(cache_env)
    _classes()
    dataclass_code.save()
    dataclass_code.uninstall()
    texts = marshal.loads(path.read_bytes())[1]
    poisoned = {text: evil for text in texts}
    body = {
        "garbage": b"\x00not marshal at all",
        "other python": marshal.dumps(("2.7.18 (default)", poisoned)),
        "not code": marshal.dumps((sys.version, {text: "print('no')" for text in texts})),
        "open to others": marshal.dumps((sys.version, poisoned)),
    }[damage]
    path.write_bytes(body)
    os.chmod(path, 0o666 if damage == "open to others" else 0o600)
    dataclass_code.install(cache_env)
    assert dataclass_code.kept() == 0
    made = _classes()  # compiled as dataclasses compiles them
    assert made["Point"](3) == made["Point"](3, 0, ())


def test_no_home_costs_only_the_time(tmp_path: Path) -> None:
    try:
        dataclass_code.install({"HOME": str(tmp_path / "missing"), "XDG_CACHE_HOME": "relative"})
        made = _classes()
        assert made["Point"](1).x == 1
        dataclass_code.save()  # nothing made, nothing raised
        assert not (tmp_path / "missing").exists()
    finally:
        dataclass_code.uninstall()


def test_nothing_is_written_where_bytecode_is_not(cache_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE: as for .pyc files
    dataclass_code.install(cache_env)
    _classes()
    dataclass_code.save()
    assert not _file(cache_env).exists()
