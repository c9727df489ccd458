"""The composition root of the typer ``remote`` commands (``terminate``, ``status``, and ``run`` when typer
parses it); tests override its providers or pass their own as ``obj``.

Imported by those commands when they run, never by the app at import: dependency-injector pulls in
pydantic-settings and asyncio (~0.1 s), which ``status JOB`` and the lean ``remote run`` do without.
"""

from __future__ import annotations

from dependency_injector import containers, providers

from dunscaith.adapters.clock.system import SystemClock
from dunscaith.adapters.process.instance_dir import DirectoryInstanceFiles
from dunscaith.adapters.process.wrapper import PosixWrapper
from dunscaith.domain.services.remote.instances import ReadStatus, TerminateInstance


class RemoteContainer(containers.DeclarativeContainer):
    clock: providers.Singleton[SystemClock] = providers.Singleton(SystemClock)
    instance_files: providers.Factory[DirectoryInstanceFiles] = providers.Factory(DirectoryInstanceFiles)
    read_status: providers.Factory[ReadStatus] = providers.Factory(ReadStatus)
    terminate: providers.Factory[TerminateInstance] = providers.Factory(TerminateInstance, clock=clock)
    wrapper: providers.Factory[PosixWrapper] = providers.Factory(PosixWrapper, clock=clock)
