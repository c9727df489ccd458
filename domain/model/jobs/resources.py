"""What a job needs, in no scheduler's words: cpus, memory, a time limit, gpus, a queue, an account.

The job spec records these; each scheduler adapter translates them into its own terms (Slurm:
``--cpus-per-task``, ``--mem`` ...) and refuses, in one line naming the need, what it cannot honour.
What no neutral need covers travels as the scheduler's own options (``JobSpec.options``), which only
that scheduler's adapter reads and checks.

The parsers here read ``submit``'s flags (docs/slurm.md, docs/local-scheduler.md): a count, a size
with an optional K/M/G/T suffix, a time limit as ``MINUTES``, ``MM:SS``, ``HH:MM:SS``, ``D-HH``,
``D-HH:MM`` or ``D-HH:MM:SS``. A value that cannot be honoured anywhere (zero cpus, "abc" of memory)
is refused here, before anything is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.jobs.errors import BadSpec

MAX_CPUS = 1_000_000
MAX_MEMORY_MB = 1 << 40  # a mebibyte count far above any machine; below every scheduler's integer limit
MAX_TIME_LIMIT_S = 10_000 * 24 * 3600  # ten thousand days: longer is a typo, and overflows some schedulers
MAX_GPUS = 100_000
MAX_TEXT = 200


class Need(StrEnum):
    """Each need by the name an adapter's refusal uses and ``status`` shows."""

    CPUS = "cpus"
    MEMORY = "memory"
    TIME_LIMIT = "time limit"
    GPUS = "gpus"
    QUEUE = "queue"  # Slurm's partition, PBS's queue
    ACCOUNT = "account"
    QOS = "qos"
    EXPORT = "export"  # which of the submitter's environment the job sees (ALL, NONE, NAME,...)


# The flag of ``submit`` that asks for each need: an adapter's refusal names both.
SUBMIT_FLAG: dict[Need, str] = {
    Need.CPUS: "--cpus-per-task", Need.MEMORY: "--mem", Need.TIME_LIMIT: "--time", Need.GPUS: "--gpus",
    Need.QUEUE: "--partition", Need.ACCOUNT: "--account", Need.QOS: "--qos", Need.EXPORT: "--export",
}


@dataclass(frozen=True, slots=True)
class Resources:
    cpus: int | None = None  # cpus for the one task of the job
    memory_mb: int | None = None  # MiB for the whole job
    time_limit_s: int | None = None  # wall-clock seconds
    gpus: int | None = None
    gpu_type: str | None = None  # with gpus only: a100 in a100:2
    queue: str | None = None
    account: str | None = None
    qos: str | None = None
    export: str | None = None

    def __post_init__(self) -> None:
        if self.gpu_type is not None and self.gpus is None:
            raise BadSpec("a gpu type needs a gpu count")

    def asked(self) -> list[Need]:
        """The needs given, in a fixed order: what an adapter must honour or refuse."""
        by_field = {"cpus": Need.CPUS, "memory_mb": Need.MEMORY, "time_limit_s": Need.TIME_LIMIT,
                    "gpus": Need.GPUS, "queue": Need.QUEUE, "account": Need.ACCOUNT, "qos": Need.QOS,
                    "export": Need.EXPORT}
        return [need for name, need in by_field.items() if getattr(self, name) is not None]

    @property
    def gpu_request(self) -> str | None:
        """The GPUs asked for, ``TYPE:COUNT`` or ``COUNT`` (the form sbatch and ``status`` both use)."""
        if self.gpus is None:
            return None
        return f"{self.gpu_type}:{self.gpus}" if self.gpu_type else str(self.gpus)

    def shown(self) -> list[str]:
        """Each need given as ``status`` shows it: ``cpus=4 memory=8G time=1-00:00:00 gpus=a100:2``."""
        return self.given(
            ("cpus", "cpus={}".format),
            ("memory_mb", lambda mb: f"memory={format_memory(mb)}"),
            ("time_limit_s", lambda s: f"time={format_time_limit(s)}"),
            ("gpus", lambda _: f"gpus={self.gpu_request}"),
            *((name, f"{name}={{}}".format) for name in ("queue", "account", "qos", "export")),
        )

    def given(self, *words: tuple[str, Callable[[Any], str]]) -> list[str]:
        """The words of each need given, in the order of ``words``: (the need's field, its words from its value)."""
        return [say(value) for name, say in words if (value := getattr(self, name)) is not None]

    def __bool__(self) -> bool:
        return any(getattr(self, f.name) is not None for f in fields(self))


NO_NEEDS = Resources()


# --- submit's formats -----------------------------------------------------------------------------------
def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def parse_count(text: str, flag: str, maximum: int = MAX_CPUS) -> int:
    if not re.fullmatch(r"[0-9]{1,12}", text.strip()) or not 1 <= int(text) <= maximum:
        raise BadSpec(f"{flag} {_shown(text)}: a whole number from 1 to {maximum:,}")
    return int(text)


_SIZE = re.compile(r"([0-9]{1,15})([KMGT]?)B?", re.IGNORECASE)
_UNIT_KB = {"K": 1, "": 1024, "M": 1024, "G": 1024**2, "T": 1024**3}


def parse_memory(text: str, flag: str) -> int:
    """MiB, rounded up: ``512K`` is 1 MiB. A bare number is MiB, as in sbatch."""
    match = _SIZE.fullmatch(text.strip())
    kib = int(match.group(1)) * _UNIT_KB[match.group(2).upper()] if match else 0
    if not match or not 1 <= kib <= MAX_MEMORY_MB * 1024:
        raise BadSpec(f"{flag} {_shown(text)}: a size of at least 1K, a number with an optional K, M, G or T "
                      "(4G, 512M; a bare number is M)")
    return -(-kib // 1024)


def format_memory(mb: int) -> str:
    for unit, size in (("T", 1024**2), ("G", 1024)):
        if mb % size == 0:
            return f"{mb // size}{unit}"
    return f"{mb}M"


_TIME = re.compile(r"(?:(?P<days>[0-9]{1,5})-)?(?P<rest>[0-9]{1,9}(?::[0-9]{1,9}){0,2})")


def parse_time_limit(text: str, flag: str) -> int:
    """Seconds, from sbatch's formats: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS."""
    match = _TIME.fullmatch(text.strip())
    seconds = 0
    if match:
        parts = [int(p) for p in match.group("rest").split(":")]
        # what follows a colon is minutes or seconds: 0 to 59, as in every format of sbatch's (25:61:00 is
        # no time of day); only the first field (minutes, hours) may be as large as it likes
        if any(part >= 60 for part in parts[1:]):
            raise BadSpec(f"{flag} {_shown(text)}: minutes and seconds after a colon are 0 to 59 (MINUTES, MM:SS, "
                          "HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS: 90, 1:30:00, 1-00:00:00)")
        if match.group("days") is not None:
            h, m, s = [*parts, 0, 0][:3]
            seconds = int(match.group("days")) * 86400 + h * 3600 + m * 60 + s
        elif len(parts) == 1:
            seconds = parts[0] * 60
        elif len(parts) == 2:
            seconds = parts[0] * 60 + parts[1]
        else:
            seconds = parts[0] * 3600 + parts[1] * 60 + parts[2]
    if not match or not 1 <= seconds <= MAX_TIME_LIMIT_S:
        raise BadSpec(f"{flag} {_shown(text)}: a time limit of at least 1 second and at most 10,000 days, as "
                      "MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (30, 10:00, 1-00:00:00)")
    return seconds


def format_time_limit(seconds: int) -> str:
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}-{hours:02}:{minutes:02}:{secs:02}" if days else f"{hours:02}:{minutes:02}:{secs:02}"


_GPU = re.compile(r"(?:(?P<type>[A-Za-z0-9][A-Za-z0-9_.-]{0,62}):)?(?P<count>[0-9]{1,9})")


def parse_gpus(text: str, flag: str) -> tuple[int, str | None]:
    """``[type:]count``: (count, type)."""
    match = _GPU.fullmatch(text.strip())
    if not match or not 1 <= int(match.group("count")) <= MAX_GPUS:
        raise BadSpec(f"{flag} {_shown(text)}: [TYPE:]COUNT with a count from 1 to {MAX_GPUS:,} (2, a100:2)")
    return int(match.group("count")), match.group("type")


_TEXT = re.compile(r"[A-Za-z0-9._,:@+=/%-]{1,200}")


def parse_text(text: str, flag: str) -> str:
    """A queue, account, qos or export list: plain text a scheduler reads as one value."""
    if not _TEXT.fullmatch(text):
        raise BadSpec(f"{flag} {_shown(text)}: 1 to {MAX_TEXT} letters, digits and ._,:@+=/%-")
    return text


# Each need but gpus (a count and a type) and the field of Resources its parser fills.
_PARSED: dict[Need, tuple[str, Callable[[str, str], int | str]]] = {
    Need.CPUS: ("cpus", parse_count),
    Need.MEMORY: ("memory_mb", parse_memory),
    Need.TIME_LIMIT: ("time_limit_s", parse_time_limit),
    Need.QUEUE: ("queue", parse_text),
    Need.ACCOUNT: ("account", parse_text),
    Need.QOS: ("qos", parse_text),
    Need.EXPORT: ("export", parse_text),
}


def parse_needs(given: Mapping[Need, tuple[str, str]]) -> Resources:
    """The needs given as text, each read by its parser, in the order given: ``given`` maps a need to its
    text and the name a refusal starts with (a flag, a key), BadSpec for the first that does not read."""
    values: dict[str, Any] = {}
    for need, (text, name) in given.items():
        if need is Need.GPUS:
            values["gpus"], values["gpu_type"] = parse_gpus(text, name)
        else:
            field, parse = _PARSED[need]
            values[field] = parse(text, name)
    return Resources(**values)
