"""The ``dunscaith`` CLI's one composition root (docs/architecture.md "The composition roots").

What the program is made of, and the only modules of the CLI that import adapters: the settings tree it
is made from (``settings.py``, which composes each kind's own settings model into one tree; loaded,
remembered and read back by ``settings_cache.py``, ``settings_paths.py``, ``settings_view.py``), the kinds
(``kinds.py``: each scheduler and store kind's package, one registration line each), and every adapter and
use case declared once (``wiring.py``), resolved by hand (``wiring.Root``) or by the dependency-injector
container made from the same declaration (``container.py``). Everything else in entrypoints receives what
it is given from here. Importing this package imports nothing.
"""
