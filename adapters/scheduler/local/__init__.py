"""``LocalScheduler``: the embedded default scheduler, objects owned by ``dunscaith remote run``."""

from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler

__all__ = ["LocalScheduler"]
