"""The root of every qdevices domain error, so the edge can catch them as one family.

Each error keeps its older base class too (``ValueError`` for the parsers and tables), so code that
catches those goes on working.
"""

from __future__ import annotations


class QdevicesError(Exception):
    """Any error the qdevices domain raises on purpose; its message is one line for the user."""
