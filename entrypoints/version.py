"""dunscaith's version, as a constant: a forwarded command states it on both sides of every hop, and
``importlib.metadata`` costs a hop ~20 ms of imports on each side. It must equal ``[project].version`` in
pyproject.toml (tests/unit/test_version.py holds the two together)."""

VERSION = "0.1.0"
