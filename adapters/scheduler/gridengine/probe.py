"""``GridEngineProbe``: what ``dunscaith check`` asks a Grid Engine cluster besides the scheduler port, in a
few seconds each (a qsub that cannot reach qmaster gives up only after ~2 minutes)."""

from __future__ import annotations

from dunscaith.adapters.scheduler.client_command import CommandResult
from dunscaith.adapters.scheduler.gridengine.commands import client_runner
from dunscaith.adapters.scheduler.gridengine.config import GridEngineConfig
from dunscaith.domain.model.jobs.check import Probe, Result

CHECK_TIMEOUT = 5.0


class GridEngineProbe:
    def __init__(self, config: GridEngineConfig, timeout: float = CHECK_TIMEOUT) -> None:
        self.config = config
        self.timeout = timeout
        self._runner = client_runner(config.bin_dir, config.env)

    def _failed(self, what: str, result: CommandResult) -> Probe:
        if result.timed_out:
            return Probe(Result.FAILED, f"qmaster did not answer `{what}` within {self.timeout:g} s")
        return Probe(Result.FAILED, f"{what}: {result.failure()}")

    def controller(self) -> Probe:
        result = self._runner.run("qstat", ["-u", self.config.user or "*", "-s", "p"], timeout=self.timeout)
        if result.ok:
            cell = self.config.env.get("SGE_CELL", "default")
            return Probe(Result.OK, f"qmaster answers (cell {cell}, SGE_ROOT {self.config.env.get('SGE_ROOT', '?')})")
        return self._failed("qstat", result)

    def accounting(self) -> Probe:
        result = self._runner.run("qconf", ["-sconf"], timeout=self.timeout)
        if not result.ok:
            return self._failed("qconf -sconf", result)
        params = next(
            (
                ln.split(None, 1)[1]
                for ln in result.stdout.splitlines()
                if ln.startswith("reporting_params") and len(ln.split(None, 1)) == 2
            ),
            "",
        )
        if "accounting=false" in params:
            return Probe(
                Result.NOT_KEPT,
                "not kept (reporting_params accounting=false): a job's end is learned only "
                "while qmaster lists it as a zombie",
            )
        asked = self._runner.run("qacct", ["-j", "dunscaith-check-probe"], timeout=self.timeout)
        if asked.ok or (asked.ran and "not found" in asked.stderr):
            return Probe(Result.OK, "qacct answers (reporting_params accounting=true)")
        return self._failed("qacct", asked)
