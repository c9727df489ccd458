"""``typing.NamedTuple``'s class syntax without importing ``typing``: for the modules on every local job's start.

``dunscaith remote run`` (the wrapper every local job starts under) writes its control files as
NamedTuples (``domain/model/remote/control.py``); importing ``typing`` for them alone costs every job's
start ~3.5 ms (a third of a bare interpreter's). A module on that path writes::

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from dunscaith.domain.model.named_tuple import NamedTuple

so mypy checks the class as the ``typing.NamedTuple`` it is declared as, and at run time the class is
made here: ``collections.namedtuple`` of the annotated fields (their defaults, in order) with every
other name of the body (methods, properties, the docstring) set on it, as ``typing.NamedTuple`` makes it
(its ``NamedTupleMeta``): the same tuple, ``_fields``, ``_field_defaults``, ``_replace``, ``_asdict``,
equality and pickling. The annotations are kept as written, not evaluated (``typing`` evaluates them only
to check them). tests/unit/domain/test_named_tuple.py holds it to ``typing.NamedTuple``.
"""

from __future__ import annotations

from collections import namedtuple

# typing's own rules: these names a NamedTuple body may not define, these it does not copy
_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                         "_make", "_replace", "_asdict", "_source"})
_SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})


class _NamedTupleMeta(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        if namespace.get("_is_base"):  # NamedTuple itself
            return super().__new__(mcs, name, bases, namespace)
        annotations = dict(namespace.get("__annotations__", {}))  # type: ignore[call-overload]
        fields = list(annotations)
        defaults = []
        for field in fields:
            if field in namespace:
                defaults.append(namespace[field])
            elif defaults:
                raise TypeError(f"Non-default namedtuple field {field} cannot follow default field"
                                f"{'s' if len(defaults) > 1 else ''} {', '.join(fields[:len(defaults)])}")
        made = namedtuple(name, fields, defaults=defaults, module=str(namespace["__module__"]))  # type: ignore[misc]
        made.__annotations__ = annotations
        for key, value in namespace.items():
            if key in _PROHIBITED:
                raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
            if key not in _SPECIAL and key not in fields:
                setattr(made, key, value)
        return made


class NamedTuple(metaclass=_NamedTupleMeta):
    """Subclass it as ``typing.NamedTuple``: the subclass is a ``collections.namedtuple`` (see the module)."""

    _is_base = True
