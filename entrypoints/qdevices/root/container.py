"""The qdevices composition root: the adapters in one container, the use cases in another, composed.

Tests swap adapters as a set (``container.adapters.override(their_container)``, see
tests/e2e/qdevices/driver.py), never through a flag or an environment variable: that is how a site's
fixed address stays fixed.

What a live call needs from the command line (the site, its token, the VLQ project, the rules file) is
the ``live`` section of the configuration, set by the command once the token has been read (and taken out
of the environment, before the rules file is imported). The site adapter is a resource of this root: built
with that token when a use case needs it, closed by ``shutdown_resources`` when the command ends.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dependency_injector import containers, providers

from dunscaith.adapters.circuits.qiskit_aqt import QiskitAqtTranslator
from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.input_files.regular import RegularInputFiles
from dunscaith.adapters.rules.python_file import NoUserRules, PythonRulesFile
from dunscaith.adapters.run_records.jsonl import JsonlRecordStore
from dunscaith.adapters.signals.posix import SignalInterrupts
from dunscaith.adapters.site_lock.flock import FlockSiteLock
from dunscaith.adapters.sites.mqss import MQSS_BASE_URL, MqssSite
from dunscaith.adapters.sites.piastq import PIASTQ_BASE_URL, PiastqSite
from dunscaith.adapters.sites.vlq import LEXIS_USERORG_URL, VLQ_HEAPPE_URL, VlqSite
from dunscaith.domain.services.qdevices.budget_view import ShowBudget
from dunscaith.domain.services.qdevices.inputs import ReadInput
from dunscaith.domain.services.qdevices.programs import PreparePrograms
from dunscaith.domain.services.qdevices.resolve import ResolveOrder
from dunscaith.domain.services.qdevices.send import SendRun
from dunscaith.domain.services.qdevices.simple import CheckSite, ShowJobs, Unlock
from dunscaith.entrypoints.qdevices.root.settings import state_dir
from dunscaith.entrypoints.qdevices.secrets import SECRETS
from dunscaith.ports.interrupts import Interrupts
from dunscaith.ports.run_io import UserRules
from dunscaith.ports.site import Site


def opened_site(factories: Callable[..., Site], name: str, token: str, project: str | None,
                on_secret: Callable[[str], None], interrupts: Interrupts) -> Iterator[Site]:
    """The site's adapter, built with the token; VLQ also with its project, the filter's hook for the
    envelope passwords it makes, and the call's signals (they end the wait for its init job)."""
    extra: dict[str, Any] = {}
    if name == "vlq":
        extra = {"project": project, "on_secret": on_secret,
                 "pause": lambda seconds: interrupts.wait(seconds) is not None}
    site = factories(name, token=token, **extra)
    try:
        yield site
    finally:
        site.close()


def chosen_rules(path: str | None, rules_file: Callable[..., UserRules], none: UserRules) -> UserRules:
    """The manifest's rules file, imported (a file that cannot be used raises RulesUnusable), or none."""
    return rules_file(path=Path(path)) if path else none


class Adapters(containers.DeclarativeContainer):
    config = providers.Configuration()

    host = providers.Singleton(socket.gethostname)
    clock = providers.Singleton(SystemClock)
    records = providers.Singleton(JsonlRecordStore, root=config.records, host=host)
    site_lock = providers.Singleton(FlockSiteLock, state_dir=providers.Callable(state_dir), host=host)
    # INT, TERM, HUP unless ignored at start: a stop line, never an interrupted request (seed 002)
    interrupts = providers.Singleton(SignalInterrupts)  # one per command: the one it installs is the one that waits
    rules_file = providers.Factory(PythonRulesFile)  # the manifest's rules file (path=)
    no_rules = providers.Singleton(NoUserRules)
    circuits = providers.Singleton(QiskitAqtTranslator)  # imports qiskit only when it translates
    secrets = providers.Object(SECRETS)
    # the manifest and its circuits: regular files of bounded size only (a /dev/zero would be read for ever)
    input_files = providers.Singleton(RegularInputFiles)
    user_rules = providers.Singleton(chosen_rules, path=config.live.rules, rules_file=rules_file.provider,
                                     none=no_rules)

    mqss_base_url = providers.Object(MQSS_BASE_URL)
    vlq_userorg_url = providers.Object(LEXIS_USERORG_URL)
    vlq_heappe_url = providers.Object(VLQ_HEAPPE_URL)
    piastq_base_url = providers.Object(PIASTQ_BASE_URL)
    # One factory per site; each takes the token when called (VLQ also its project and the filter's hook).
    sites: providers.FactoryAggregate[Site] = providers.FactoryAggregate(
        mqss=providers.Factory(MqssSite, base_url=mqss_base_url),
        vlq=providers.Factory(VlqSite, userorg_url=vlq_userorg_url, heappe_url=vlq_heappe_url),
        piastq=providers.Factory(PiastqSite, base_url=piastq_base_url, program_format=config.piastq_format),
    )
    site = providers.Resource(opened_site, factories=sites.provider, name=config.live.site, token=config.live.token,
                              project=config.live.project, on_secret=secrets.provided.add, interrupts=interrupts)


class UseCases(containers.DeclarativeContainer):
    config = providers.Configuration()
    adapters = providers.DependenciesContainer()

    # the dry run: every check, no site; a live call: the same with the site the container opened
    plan = providers.Factory(SendRun, records=adapters.records, lock=adapters.site_lock, clock=adapters.clock,
                             interrupts=adapters.interrupts, user_rules=adapters.user_rules, host=adapters.host,
                             poll_seconds=config.poll_seconds, redact=adapters.secrets.provided.clean)
    send = providers.Factory(SendRun, records=adapters.records, lock=adapters.site_lock, clock=adapters.clock,
                             interrupts=adapters.interrupts, user_rules=adapters.user_rules, host=adapters.host,
                             poll_seconds=config.poll_seconds, redact=adapters.secrets.provided.clean,
                             site=adapters.site)
    resolve = providers.Factory(ResolveOrder, records=adapters.records, lock=adapters.site_lock, clock=adapters.clock)
    jobs = providers.Factory(ShowJobs, records=adapters.records)
    budget = providers.Factory(ShowBudget, records=adapters.records)
    read_input = providers.Factory(ReadInput, files=adapters.input_files)
    programs = providers.Factory(PreparePrograms, translator=adapters.circuits, piastq_format=config.piastq_format)
    unlock = providers.Factory(Unlock, lock=adapters.site_lock)
    check = providers.Factory(CheckSite, lock=adapters.site_lock, site=adapters.site)


class Container(containers.DeclarativeContainer):
    config = providers.Configuration(strict=True)
    adapters = providers.Container(Adapters, config=config)
    use_cases = providers.Container(UseCases, config=config, adapters=adapters)
