"""The text of a file the user names for a call: a manifest, an order's circuit."""

from __future__ import annotations

from pathlib import Path

from dunscaith.ports.input_files import InputFiles


class ReadInput:
    def __init__(self, files: InputFiles) -> None:
        self.files = files

    def __call__(self, path: Path, limit: int) -> str:
        """The UTF-8 text of ``path``, a regular file of at most ``limit`` bytes (the manifest's and the
        circuit's bounds: domain/model/qdevices/manifest.py); else the port's errors, UnicodeDecodeError."""
        return self.files.read(path, limit).decode("utf-8")
