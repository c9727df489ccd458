"""dunscaith: the one import name an installed dunscaith adds to site-packages.

The repository keeps its layers as top-level folders (domain/, ports/, adapters/, entrypoints/,
migrations/); this package holds a symbolic link to each, so ``dunscaith.domain`` is ``domain/`` in a
clone (for the editable install, pytest, mypy, import-linter and alembic alike) and a plain folder in the
wheel, where setuptools copies what the links name. Nothing is imported here: every path of the two
console scripts pays for this module.
"""
