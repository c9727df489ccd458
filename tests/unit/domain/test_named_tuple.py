"""named_tuple.NamedTuple (the wrapper's records, without importing typing) is typing.NamedTuple at run time."""

from __future__ import annotations

import pickle
import typing
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # as the modules on the wrapper's path write it: mypy checks typing's
    from typing import NamedTuple as LightNamedTuple
else:
    from dunscaith.domain.model.named_tuple import NamedTuple as LightNamedTuple


class Light(LightNamedTuple):
    """A record."""

    a: int
    b: str = "x"
    c: tuple[int, ...] = ()

    @property
    def twice(self) -> int:
        return self.a * 2

    def shown(self) -> str:
        return f"{self.a}{self.b}"


class Typed(typing.NamedTuple):
    """A record."""

    a: int
    b: str = "x"
    c: tuple[int, ...] = ()

    @property
    def twice(self) -> int:
        return self.a * 2

    def shown(self) -> str:
        return f"{self.a}{self.b}"


def test_the_same_tuple_as_typing_makes() -> None:
    both: tuple[Any, ...] = (Light, Typed)
    for cls in both:
        one: Any = cls(1)
        assert one == (1, "x", ()) and isinstance(cls(1), tuple)
        assert cls._fields == ("a", "b", "c") and cls._field_defaults == {"b": "x", "c": ()}
        assert one._replace(b="y") == cls(1, "y") and one._asdict() == {"a": 1, "b": "x", "c": ()}
        assert one.twice == 2 and one.shown() == "1x" and cls.__doc__ == "A record."
        assert repr(one) == f"{cls.__name__}(a=1, b='x', c=())"
        assert cls.__module__ == __name__ and cls.__qualname__ == cls.__name__
        assert list(cls.__annotations__) == ["a", "b", "c"]
        with pytest.raises(AttributeError):
            one.a = 2
    assert pickle.loads(pickle.dumps(Light(3, "z"))) == Light(3, "z")
    assert hash(Light(1)) == hash(Typed(1)) and tuple(Light(1)) == tuple(Typed(1))
    assert type(Light(1)).__mro__[1:] == type(Typed(1)).__mro__[1:] == (tuple, object)


def test_refuses_what_typing_refuses() -> None:
    for module in ("typing", "dunscaith.domain.model.named_tuple"):
        head = f"from {module} import NamedTuple\nclass Wrong(NamedTuple):\n    a: int = 1\n"
        with pytest.raises(TypeError, match="Non-default namedtuple field b cannot follow default field a"):
            exec(head + "    b: int\n", {})
        with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
            exec(head + "    def _replace(self): pass\n", {})


def test_the_wrapper_path_imports_neither_typing_nor_pathlib() -> None:
    import subprocess
    import sys

    code = ("import sys; import dunscaith.entrypoints.dunscaith.remote_run, dunscaith.adapters.process.wrapper, "
            "dunscaith.adapters.clock.system; print(sorted({'typing', 'pathlib', 'contextlib'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
