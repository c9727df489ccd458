"""The validated settings tree read as plain data: the one shape of the settings on the paths without pydantic.

``load_settings`` (pydantic, settings.py) validates the settings; ``settings_cache`` remembers its answer as
JSON, the whole tree (every value, defaults included), what was set, and where a value is a path. The front
door's plain ``status``/``list``/``submit`` and routing read that tree here, through ``DunscaithSettings``'
own names (``.supervise.poll``, ``.records.root``, ``.cluster(name).adapter``, ``.clusters.items()``,
``model_fields_set``): each table is a ``Section`` over its part of the tree, typed as the model
(``plain_settings`` is a ``DunscaithSettings`` to mypy). There is no second model: a key added to a table of
settings.py is in the remembered tree, and so here, with nothing else written. What a plain path may not use
is the model's own methods beyond ``cluster``; a kind's cluster table is read by the kind's package from the
validated model (``wiring._table``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings

FIELDS_SET = "model_fields_set"


class Section:
    """One table of the tree (a sub-model's values): its keys as attributes, as the model names them; a key
    whose value is a table is a Section, a mapping (a cluster's ``env``) stays a dict."""

    __slots__ = ("_given", "_place", "_tables", "_values")

    def __init__(
        self, values: dict[str, Any], given: dict[str, Any], place: tuple[str, ...], tables: frozenset[tuple[str, ...]]
    ) -> None:
        self._values = values
        self._given = given  # what of this table was set (the model's model_fields_set)
        self._place = place
        self._tables = tables  # where the tree's tables are (each a sub-model)

    def _part(self, name: str, value: Any, given: Any, inside: tuple[str, ...] = ()) -> Any:
        place = (*self._place, *inside, name)
        if place not in self._tables:
            return value
        return Section(value, given if isinstance(given, dict) else {}, place, self._tables)

    def __getattr__(self, name: str) -> Any:
        try:
            value = self._values[name]
        except KeyError:
            raise AttributeError(name) from None
        return self._part(name, value, self._given.get(name))

    @property
    def model_fields_set(self) -> set[str]:
        return set(self._given)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Section) and (self._values, self._given) == (other._values, other._given)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Section({self._values!r})"


class Settings(Section):
    """The whole tree: ``clusters`` is a table of tables (name -> a cluster's), and ``cluster`` as the model's."""

    __slots__ = ()

    @property
    def clusters(self) -> dict[str, Section]:
        given = self._given.get("clusters")
        return {
            name: self._part(name, table, given.get(name) if isinstance(given, dict) else None, ("clusters",))
            for name, table in self._values["clusters"].items()
        }

    def cluster(self, name: str) -> Section:
        """A configured cluster's table; one not configured is refused by ``load_settings``' own words."""
        found = self.clusters.get(name)
        if found is not None:
            return found
        from dunscaith.entrypoints.dunscaith.root.settings import load_settings

        load_settings().cluster(name)  # BadInput, word for word
        raise AssertionError(f"cluster {name} validated but not remembered")  # the cache is keyed by every input


def shape(value: Any, place: tuple[str, ...] = ()) -> dict[str, list[list[str]]]:
    """Where, in the validated model ``value``, the values are paths and the tables (sub-models) are, each
    as its keys: what the JSON of the tree does not say, remembered beside it."""
    found: dict[str, list[list[str]]] = {"paths": [], "tables": []}
    if isinstance(value, Path):
        found["paths"].append(list(place))
        return found
    fields = getattr(type(value), "model_fields", None)
    if isinstance(fields, dict):
        found["tables"].append(list(place))
        items = [(name, getattr(value, name)) for name in fields]
    elif isinstance(value, dict):
        items = [(str(key), item) for key, item in value.items()]
    else:
        return found
    for name, item in items:
        inner = shape(item, (*place, name))
        found["paths"] += inner["paths"]
        found["tables"] += inner["tables"]
    return found


def _places(found: Any) -> list[list[str]] | None:
    if not isinstance(found, list) or not all(
        isinstance(p, list) and all(isinstance(k, str) for k in p) for p in found
    ):
        return None
    return found


def of_remembered(whole: Any, given: Any, where: Any) -> DunscaithSettings | None:
    """The tree remembered by ``settings_cache.remember``; None when it is not one (damaged, not ours)."""
    paths = _places(where.get("paths")) if isinstance(where, dict) else None
    tables = _places(where.get("tables")) if isinstance(where, dict) else None
    if not isinstance(whole, dict) or not isinstance(given, dict) or paths is None or tables is None:
        return None
    if not isinstance(whole.get("clusters"), dict) or not all(isinstance(t, dict) for t in whole["clusters"].values()):
        return None
    for place in paths:
        table: Any = whole
        for key in place[:-1]:
            table = table.get(key) if isinstance(table, dict) else None
        if not place or not isinstance(table, dict) or not isinstance(table.get(place[-1]), str):
            return None
        table[place[-1]] = Path(table[place[-1]])
    view: DunscaithSettings = Settings(whole, given, (), frozenset(tuple(place) for place in tables))  # type: ignore[assignment]
    return view  # DunscaithSettings' names, read from its validated values
