"""An instance directory on disk, as the InstanceFiles port: the one reader, and the request publisher."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.durable.publish import publish
from dunscaith.adapters.instance_dir.reader import NotAnInstance as NotAnInstance
from dunscaith.adapters.instance_dir.reader import read_instance_dir
from dunscaith.domain.model.remote.control import REQUEST, InstanceRecords, TerminateRequest, encode


class DirectoryInstanceFiles:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @property
    def location(self) -> str:
        return str(self.directory.absolute())

    def read(self) -> tuple[bool, InstanceRecords]:
        return read_instance_dir(self.directory)

    def publish_request(self, request: TerminateRequest) -> bool:
        return publish(self.directory, REQUEST, encode(request))
