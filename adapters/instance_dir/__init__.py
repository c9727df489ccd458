"""The one reader of a ``dunscaith remote run`` instance directory, shared by the adapters that read one.

The wrapper's ``remote status``/``terminate`` (adapters.process) and the local scheduler's queries
(adapters.scheduler.local) both read instance directories; they may not import each other, so the
reader sits in this layer below them (import-linter: above adapters.durable, below every adapter).
"""
