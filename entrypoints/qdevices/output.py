"""What a call prints: every line through the redaction filter, and never fatal to a live call.

A closed pipe or terminal is passed over: the first failed write sends the rest of this stream to
/dev/null, so neither the write nor the interpreter's last flush can end or fail the call.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO


class SafePrinter:
    def __init__(self, redact: Callable[[str], str]) -> None:
        self.redact = redact

    def _write(self, stream_name: str, text: str) -> None:
        stream: TextIO = getattr(sys, stream_name)
        try:
            stream.write(self.redact(text) + "\n")
            stream.flush()
        except (OSError, ValueError):
            try:
                setattr(sys, stream_name, open(os.devnull, "w"))  # noqa: SIM115 - lives as long as the process
            except OSError:
                pass

    def say(self, text: str) -> None:
        self._write("stdout", text)

    def warn(self, text: str) -> None:
        self._write("stderr", text)
