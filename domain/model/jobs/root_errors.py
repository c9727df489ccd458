"""Why a record root is refused. Each is the user's to fix (a setting, a directory), so the CLI exits 2."""

from __future__ import annotations

from dunscaith.domain.model.jobs.errors import JobsError

ROOT_SETTING = "records.root (environment: DUNSCAITH_RECORDS__ROOT)"


class RecordRootRefused(JobsError):
    """The record root cannot hold records safely; the message names the root and what to change."""

    def __init__(self, root: str, says: str) -> None:
        super().__init__(f"record root {root} {says}")
        self.root = root


class RootOnNetworkFilesystem(RecordRootRefused):
    def __init__(self, root: str, filesystem: str) -> None:
        super().__init__(
            root,
            f"is on a network filesystem ({filesystem}), where a job's lock cannot be trusted; "
            f"set {ROOT_SETTING} to a directory on a local disk",
        )
        self.filesystem = filesystem


class RootOfAnotherHost(RecordRootRefused):
    def __init__(self, root: str, recorded: str, this_host: str, owner_hostname: str) -> None:
        super().__init__(
            root,
            f"belongs to host {recorded}, and this is host {this_host}; "
            f"run the command on {owner_hostname}, or set {ROOT_SETTING} to a root of this host",
        )
        self.recorded = recorded
        self.this_host = this_host


class RootUnsafe(RecordRootRefused):
    """A symlink, another user's directory, or not a directory at all: never used for records."""

    def __init__(self, root: str, why: str) -> None:
        super().__init__(root, f"cannot be used: {why}; set {ROOT_SETTING} to a directory of your own")


class RootHostFileDamaged(RecordRootRefused):
    def __init__(self, root: str, why: str) -> None:
        super().__init__(
            root,
            f"has a HOST file that does not read ({why}); it binds the root to its machine, "
            f"so it is not rewritten: check the root, or set {ROOT_SETTING} to another directory",
        )
