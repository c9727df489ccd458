"""The Grid Engine scheduler (Son of Grid Engine 8.1.9, and the families carrying its commands): ``qsub``,
``qstat``, ``qrls``, ``qhold``, ``qdel``, ``qmod`` and ``qacct``, run as subprocesses (never a shell).

``GridEngineScheduler`` implements the scheduler port (and ``CreatesArrays``: a sweep is one array job).
docs/gridengine.md says what maps to what and what Grid Engine cannot do here.
"""

from dunscaith.adapters.scheduler.gridengine.config import GridEngineConfig
from dunscaith.adapters.scheduler.gridengine.scheduler import GridEngineScheduler

__all__ = ["GridEngineConfig", "GridEngineScheduler"]
