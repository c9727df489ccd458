"""``SlurmProbe``: what ``dunscaith check`` asks a Slurm cluster besides the scheduler port, in a few seconds.

Each call has a short timeout of its own (``timeout``), far below the supervisor's: a check says at once
that a controller does not answer rather than waiting as long as a submit would. A ``slurm.conf`` that
cannot be read is said before any client is run (a client would look for it for 60 s).
"""

from __future__ import annotations

import re

from dunscaith.adapters.scheduler.client_command import CommandResult, CommandRunner
from dunscaith.adapters.scheduler.slurm import scontrol
from dunscaith.adapters.scheduler.slurm.config import SlurmClusterConfig, clusters_args
from dunscaith.adapters.scheduler.slurm.controller import Controller, cluster_env, controller
from dunscaith.domain.model.jobs.check import Probe, Result

CHECK_TIMEOUT = 5.0
_UP = re.compile(r"^Slurmctld\((\w+)\) at (\S+) is UP$", re.M)
_DOWN = re.compile(r"^Slurmctld\((\w+)\) at (\S+) is DOWN$", re.M)


class SlurmProbe:
    def __init__(self, config: SlurmClusterConfig, timeout: float = CHECK_TIMEOUT) -> None:
        self.config = config
        self.timeout = timeout
        self._runner = CommandRunner(config.bin_dir, config.env)

    def _clusters(self) -> list[str]:
        return clusters_args(self.config.clusters)

    def _where(self) -> Controller:
        return controller(cluster_env(self.config.env))

    def _unanswered(self, what: str, result: CommandResult, where: Controller) -> Probe:
        said = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        tail = f"; it said: {said[-1]}" if said else ""
        if result.timed_out:
            return Probe(Result.FAILED, f"{where.words()} did not answer `{what}` within {self.timeout:g} s{tail}")
        return Probe(Result.FAILED, f"{what}: {result.failure()}")

    def controller(self) -> Probe:
        where = self._where()
        if where.conf_problem:
            return Probe(Result.FAILED, where.conf_words())
        result = self._runner.run("scontrol", [*self._clusters(), "ping"], timeout=self.timeout)
        up = _UP.findall(result.stdout)
        if result.ok and up:
            role, host = up[0]
            return Probe(Result.OK, f"slurmctld ({role}) at {host}:{where.port} answers (from {where.conf})")
        down = _DOWN.findall(result.stdout)
        if down and not result.timed_out:
            role, host = down[0]
            return Probe(Result.FAILED, f"slurmctld ({role}) at {host}:{where.port} is DOWN (from {where.conf}): "
                                        "it does not answer there")
        return self._unanswered("scontrol ping", result, where)

    def accounting(self) -> Probe:
        if self.config.accounting is False:
            return Probe(Result.NOT_KEPT, "not used (accounting = false in the cluster's settings): a job slurmctld "
                                          "has purged is not learned")
        where = self._where()
        shown = self._runner.run("scontrol", [*self._clusters(), "show", "config"], timeout=self.timeout)
        config = scontrol.parse_config(shown.stdout) if shown.ok else {}
        if not shown.ok and self.config.accounting is None:
            return self._unanswered("scontrol show config", shown, where)
        storage = config.get("AccountingStorageType", "unknown")
        if not (self.config.accounting or scontrol.accounting_enabled(config)):
            age = config.get("MinJobAge", "").split()
            kept = f" (MinJobAge {age[0]} s)" if age else ""
            return Probe(Result.NOT_KEPT, f"not kept (AccountingStorageType={storage}): a job's end is learned "
                                          f"only while slurmctld remembers it{kept}")
        asked = self._runner.run("sacct", ["--noheader", "-X", "-P", "--format=JobID", "--starttime=now-60",
                                           *self._clusters()], timeout=self.timeout)
        if asked.ok:
            return Probe(Result.OK, f"sacct answers (AccountingStorageType={storage})")
        return self._unanswered("sacct", asked, where)
