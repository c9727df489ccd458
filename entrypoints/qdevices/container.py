"""The qdevices composition root: the adapters in one container, the use cases in another, composed.

Tests swap adapters as a set (``container.adapters.override(their_container)``, see
tests/e2e/qdevices/driver.py), never through a flag or an environment variable: that is how a site's
fixed address stays fixed.
"""

from __future__ import annotations

import socket

from dependency_injector import containers, providers

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.rules.python_file import NoUserRules, PythonRulesFile
from dunscaith.adapters.run_records.jsonl import JsonlRecordStore
from dunscaith.adapters.signals.posix import SignalInterrupts
from dunscaith.adapters.site_lock.flock import FlockSiteLock
from dunscaith.adapters.sites.mqss import MQSS_BASE_URL, MqssSite
from dunscaith.adapters.sites.piastq import PIASTQ_BASE_URL, PiastqSite
from dunscaith.adapters.sites.vlq import LEXIS_USERORG_URL, VLQ_HEAPPE_URL, VlqSite
from dunscaith.domain.services.qdevices.resolve import ResolveOrder
from dunscaith.domain.services.qdevices.send import SendRun
from dunscaith.domain.services.qdevices.simple import CheckSite, ShowJobs, Unlock
from dunscaith.entrypoints.qdevices.settings import state_dir
from dunscaith.ports.site import Site


class Adapters(containers.DeclarativeContainer):
    config = providers.Configuration()

    host = providers.Singleton(socket.gethostname)
    clock = providers.Singleton(SystemClock)
    records = providers.Singleton(JsonlRecordStore, root=config.records, host=host)
    site_lock = providers.Singleton(FlockSiteLock, state_dir=providers.Callable(state_dir), host=host)
    # INT, TERM, HUP unless ignored at start: a stop line, never an interrupted request (seed 002)
    interrupts = providers.Factory(SignalInterrupts)
    rules_file = providers.Factory(PythonRulesFile)  # the manifest's rules file (path=)
    no_rules = providers.Singleton(NoUserRules)

    mqss_base_url = providers.Object(MQSS_BASE_URL)
    vlq_userorg_url = providers.Object(LEXIS_USERORG_URL)
    vlq_heappe_url = providers.Object(VLQ_HEAPPE_URL)
    piastq_base_url = providers.Object(PIASTQ_BASE_URL)
    # One factory per site; each takes the token when called (VLQ also its project and the filter's hook).
    sites: providers.FactoryAggregate[Site] = providers.FactoryAggregate(
        mqss=providers.Factory(MqssSite, base_url=mqss_base_url),
        vlq=providers.Factory(VlqSite, userorg_url=vlq_userorg_url, heappe_url=vlq_heappe_url),
        piastq=providers.Factory(PiastqSite, base_url=piastq_base_url),
    )


class UseCases(containers.DeclarativeContainer):
    config = providers.Configuration()
    adapters = providers.DependenciesContainer()

    send = providers.Factory(SendRun, records=adapters.records, lock=adapters.site_lock, clock=adapters.clock,
                             poll_seconds=config.poll_seconds)
    resolve = providers.Factory(ResolveOrder, records=adapters.records, lock=adapters.site_lock, clock=adapters.clock)
    jobs = providers.Factory(ShowJobs, records=adapters.records)
    unlock = providers.Factory(Unlock, lock=adapters.site_lock)
    check = providers.Factory(CheckSite, lock=adapters.site_lock)


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)
    adapters = providers.Container(Adapters, config=config)
    use_cases = providers.Container(UseCases, config=config, adapters=adapters)
