"""Benchmark: the redaction filter on record-sized lines, against ``str.replace`` of one string.

Prints lines per second for a 200-byte line with one 40-character secret (absent, and present once),
and with the token plus 20 VLQ envelope passwords, for the filter and for the baseline measured in the
same run (``str.replace`` of the one secret), and their ratio. Nothing is asserted.

    .venv/bin/python benchmarks/redaction.py
"""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable

from dunscaith.domain.model.qdevices.redaction import Redactor

LINE_BYTES = 200
SECRET_CHARS = 40
ROUNDS = 5
LINES_PER_ROUND = 20_000
PASSWORDS = 20


def _line(rng: random.Random, secret: str | None) -> str:
    alphabet = string.ascii_letters + string.digits + ' ":,{}'
    filler = "".join(rng.choice(alphabet) for _ in range(LINE_BYTES))
    if secret is None:
        return filler
    at = rng.randrange(LINE_BYTES - len(secret))
    return filler[:at] + secret + filler[at + len(secret) :]


def _rate(fn: Callable[[str], str], lines: list[str]) -> float:
    best = 0.0
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for line in lines:
            fn(line)
        elapsed = time.perf_counter() - start
        best = max(best, len(lines) / elapsed)
    return best


def _report(label: str, redactor: Redactor, secret: str, lines: list[str]) -> None:
    assert all(secret not in redactor.clean(line) for line in lines[:100])
    filt = _rate(redactor.clean, lines)
    base = _rate(lambda line: line.replace(secret, "[REDACTED]"), lines)
    print(
        f"{label:34s} Redactor.clean {filt:10,.0f} lines/s   str.replace {base:12,.0f} lines/s"
        f"   ratio (replace/clean) {base / filt:6.1f}x   {1e6 / filt:6.2f} us/line"
    )


def main() -> None:
    rng = random.Random(6)
    secret = "".join(rng.choice(string.ascii_letters + string.digits + "-_.") for _ in range(SECRET_CHARS))
    redactor = Redactor([secret])
    print(f"line {LINE_BYTES} bytes, one secret of {SECRET_CHARS} chars, best of {ROUNDS} x {LINES_PER_ROUND} lines")
    for label, present in (("no secret in the line", None), ("secret once in the line", secret)):
        _report(label, redactor, secret, [_line(rng, present) for _ in range(LINES_PER_ROUND)])
    # A VLQ call: the token and a 50-character envelope password per job (letters, digits, punctuation).
    passwords = ["".join(rng.choice(string.printable[:94]) for _ in range(50)) for _ in range(PASSWORDS)]
    many = Redactor([secret, *passwords])
    label = f"token + {PASSWORDS} passwords, none in line"
    _report(label, many, secret, [_line(rng, None) for _ in range(LINES_PER_ROUND)])


if __name__ == "__main__":
    main()
