"""The ``qdevices`` CLI's one composition root (docs/architecture.md "The composition roots"): its
settings (``settings.py``, built from the value types the adapters' settings share) and its
dependency-injector container (``container.py``); the only modules of qdevices that import adapters.
Importing this package imports nothing."""
