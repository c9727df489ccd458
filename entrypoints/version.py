"""dunscaith's version, as a constant: a forwarded command states it on both sides of every hop, and
``importlib.metadata`` costs a hop ~20 ms of imports on each side. It must equal ``[project].version`` in
pyproject.toml (tests/unit/test_version.py holds the two together). Kept in the domain (a record's
folded snapshot names the build that wrote it), so there is one constant."""

from dunscaith.domain.model.version import VERSION

__all__ = ["VERSION"]
