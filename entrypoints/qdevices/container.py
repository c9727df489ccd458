"""The qdevices dependency-injector container.

Tests swap adapters here (``container.mqss_base_url.override(...)``, ``container.sites.override(...)``),
never through a flag or an environment variable: that is how a site's fixed address stays fixed.
"""

from __future__ import annotations

import socket

from dependency_injector import containers, providers

from adapters.clock.system import SystemClock
from adapters.run_records.jsonl import JsonlRecordStore
from adapters.site_lock.flock import FlockSiteLock
from adapters.sites.mqss import MQSS_BASE_URL, MqssSite
from adapters.sites.piastq import PIASTQ_BASE_URL, PiastqSite
from adapters.sites.vlq import LEXIS_USERORG_URL, VLQ_HEAPPE_URL, VlqSite
from domain.services.qdevices.resolve import ResolveOrder
from domain.services.qdevices.send import SendRun
from domain.services.qdevices.simple import CheckSite, ShowJobs, Unlock
from entrypoints.qdevices.settings import state_dir
from ports.site import Site


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)

    host = providers.Singleton(socket.gethostname)
    clock = providers.Singleton(SystemClock)
    records = providers.Singleton(JsonlRecordStore, root=config.records, host=host)
    site_lock = providers.Singleton(FlockSiteLock, state_dir=providers.Callable(state_dir), host=host)

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

    send = providers.Factory(SendRun, records=records, lock=site_lock, clock=clock,
                             poll_seconds=config.poll_seconds)
    resolve = providers.Factory(ResolveOrder, records=records, lock=site_lock, clock=clock)
    jobs = providers.Factory(ShowJobs, records=records)
    unlock = providers.Factory(Unlock, lock=site_lock)
    check = providers.Factory(CheckSite, lock=site_lock)
