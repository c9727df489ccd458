"""What a call prints: every line through the redaction filter, and never fatal to a live call.

Each message is one line: a newline or control character in it (a job id or an answer from a site)
is printed escaped, so a site cannot add lines to the output.

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
        from dunscaith.domain.model.qdevices.answers import shown  # on the first line printed: never for --help

        stream: TextIO = getattr(sys, stream_name)
        try:
            stream.write(shown(self.redact(text)) + "\n")
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
