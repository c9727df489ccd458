"""dunscaith's version, as a constant (entrypoints/version.py re-exports it for forwarding).

The domain needs it too: a folded snapshot of a record (snapshot.py) is trusted only by the build that
wrote it. It must equal ``[project].version`` in pyproject.toml (tests/unit/test_version.py)."""

VERSION = "0.1.0"
