"""The redaction filter of this qdevices process: it grows as secrets are read (the token, then each VLQ
envelope password a site adapter makes), and every line printed passes it. One per process, so the
container hands the same one to the site adapter (``on_secret``) that the printer cleans with."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the filter's model is imported on first use: --help needs none of it
    from dunscaith.domain.model.qdevices.redaction import Redactor


class SecretFilter:
    def __init__(self) -> None:
        self._redactor: Redactor | None = None

    def _current(self) -> Redactor:
        if self._redactor is None:
            from dunscaith.domain.model.qdevices.redaction import Redactor

            self._redactor = Redactor()
        return self._redactor

    def add(self, *secrets: str) -> None:
        self._redactor = self._current().with_secrets(*secrets)

    def clean(self, text: str) -> str:
        return self._current().clean(text)


SECRETS = SecretFilter()
