"""The hidden flag of a forwarded command: the one name every layer reads it by.

Set in the forwarded command's environment (the request id), so that it never forwards again. A module of
its own, importing nothing: the front door's lean paths (``front_door``, ``reads``, ``submits``,
``forwarding_root``) ask it before anything else is imported, and the forwarded side sets it.
"""

FORWARDED_ENV = "DUNSCAITH_FORWARDED"
