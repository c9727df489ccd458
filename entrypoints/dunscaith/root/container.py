"""The ``dunscaith`` CLI's dependency-injector container, made from the one declaration (``wiring.PARTS``).

``Adapters`` holds every technology the job commands use, ``UseCases`` every use case, built from the
adapters' ports only; ``Container`` composes them over the settings. Each provider is made from its part
in ``wiring.py`` (its builder and the parts it is built from), so this container and the lean resolver
the console script uses (``wiring.Root``) wire every part the same way. Tests swap the whole adapter set
at once: ``container.adapters.override(FakeAdapters())`` (tests/fakes/dunscaith_adapters.py), or one
provider at a time; a command run by a test with ``obj=Container()`` resolves through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dependency_injector import containers, providers

from dunscaith.entrypoints.dunscaith.root import wiring

MOUNTINFO_VARIABLE = wiring.MOUNTINFO_VARIABLE
shown_records_url = wiring.shown_records_url

_SCOPES: dict[str, Callable[..., Any]] = {
    "factory": providers.Factory,
    "singleton": providers.Singleton,
    "resource": providers.Resource,
}


def _providers(parts: dict[str, wiring.Part], ref: Callable[[str], Any], made: dict[str, Any]) -> None:
    """One provider per part into ``made``, each given the providers of the parts it is built from (``ref``:
    the parts declared before it)."""
    for name, part in parts.items():
        if part.scope == "object":
            made[name] = providers.Object(part.build)
            continue
        needs = {
            wiring.param(need): ref(need[1:]).provider if need.startswith("@") else ref(need) for need in part.needs
        }
        made[name] = _SCOPES[part.scope](part.build, **needs)


def _adapters() -> Any:
    settings: providers.Dependency[Any] = providers.Dependency()
    own: dict[str, Any] = {"settings": settings}
    _providers(wiring.ADAPTERS, lambda need: own[need], own)
    return type("Adapters", (containers.DeclarativeContainer,), own)


def _use_cases() -> Any:
    settings: providers.Dependency[Any] = providers.Dependency()
    adapters = providers.DependenciesContainer()
    own: dict[str, Any] = {"settings": settings, "adapters": adapters}

    def ref(need: str) -> Any:  # a use case declared before, else an adapter (a part never needs itself)
        return own[need] if need in own else getattr(adapters, need)

    _providers(wiring.USE_CASES, ref, own)
    return type("UseCases", (containers.DeclarativeContainer,), own)


def _load_settings() -> Any:
    from dunscaith.entrypoints.dunscaith.root.settings import load_settings

    return load_settings()


Adapters = _adapters()
UseCases = _use_cases()


class Container(containers.DeclarativeContainer):
    settings = providers.Singleton(_load_settings)
    adapters = providers.Container(Adapters, settings=settings)
    use_cases = providers.Container(UseCases, settings=settings, adapters=adapters)
