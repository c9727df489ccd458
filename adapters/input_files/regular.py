"""The files a user names for a call (a manifest, its circuits), read as the InputFiles port reads them."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.durable.private_read import UnsafeFile, read_named_file
from dunscaith.ports.input_files import InputRefused


class RegularInputFiles:
    def read(self, path: Path, limit: int) -> bytes:
        try:
            return read_named_file(path, limit)
        except UnsafeFile as exc:  # a FIFO, /dev/zero, a folder, too large: refused unread
            raise InputRefused(f"{exc.reason}; only a regular file of at most {limit >> 20} MiB is read") from None
