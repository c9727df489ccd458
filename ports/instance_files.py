"""The files of one ``dunscaith remote`` instance directory, as the terminate and status use cases see them."""

from __future__ import annotations

from typing import Protocol

from dunscaith.domain.model.remote.control import InstanceRecords, TerminateRequest


class InstanceFiles(Protocol):
    def read(self) -> tuple[bool, InstanceRecords]:
        """Whether a live wrapper holds the lock (observed first), then the decoded files.

        The files are read in the reverse order of their writing, and a file removed before it is
        read counts as absent. Raises ``domain.model.remote.control.ControlError`` for a file the
        decoder refuses.
        """
        ...

    def publish_request(self, request: TerminateRequest) -> bool:
        """Publish ``terminate.json`` unless one is there already (never replacing); True if written."""
        ...

    @property
    def location(self) -> str:
        """Where the instance lives, for the status object (an absolute path)."""
        ...
