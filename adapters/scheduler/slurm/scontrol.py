"""``scontrol show config`` and ``scontrol -o show job``: the few facts squeue lacks."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dunscaith.adapters.scheduler.slurm.arrays import expand_indices, task_index

_CONFIG_LINE = re.compile(r"^(\w+)\s*=\s*(.*)$")


def parse_config(stdout: str) -> dict[str, str]:
    config = {}
    for line in stdout.splitlines():
        match = _CONFIG_LINE.match(line.strip())
        if match:
            config[match.group(1)] = match.group(2).strip()
    return config


def message_timeout(config: dict[str, str]) -> float | None:
    """``MessageTimeout = 10 sec`` → 10.0."""
    value = config.get("MessageTimeout", "").split()
    return float(value[0]) if value and value[0].isdigit() else None


def max_array_size(config: dict[str, str]) -> int | None:
    """``MaxArraySize = 1001`` → 1001: task indices run from 0 to 1000."""
    value = config.get("MaxArraySize", "").split()
    return int(value[0]) if value and value[0].isdigit() else None


# slurmctld refuses a batch script larger than SchedulerParameters' max_script_size (default 4 MiB)
DEFAULT_MAX_SCRIPT_SIZE = 4 * 1024 * 1024
_MAX_SCRIPT = re.compile(r"(?:^|,)max_script_size=([0-9]+)(?:,|$)")


def max_script_size(config: dict[str, str]) -> int:
    match = _MAX_SCRIPT.search(config.get("SchedulerParameters", ""))
    return int(match.group(1)) if match else DEFAULT_MAX_SCRIPT_SIZE


def accounting_enabled(config: dict[str, str]) -> bool:
    """sacct works only with slurmdbd (22.05 has no file-based accounting storage)."""
    return config.get("AccountingStorageType", "").strip() == "accounting_storage/slurmdbd"


@dataclass(frozen=True, slots=True)
class JobDetail:
    job_id: str
    exit_code: str  # "N:SIG"
    restarts: int


_KEYS = re.compile(r"(?:^|\s)(JobId|ArrayJobId|ArrayTaskId|ExitCode|Restarts)=(\S*)")


def parse_jobs(stdout: str) -> dict[str, JobDetail]:
    """One line per job (``-o``); only the keys we need, which never contain spaces. A task of an array is
    keyed ``A_i`` (its own ``JobId`` is another number once it started), as squeue names it."""
    details = {}
    for line in stdout.splitlines():
        found = dict(_KEYS.findall(line))
        if "JobId" in found and "ExitCode" in found:
            restarts = found.get("Restarts", "0")
            index = task_index(found.get("ArrayTaskId", ""))
            job_id = found["JobId"] if index is None else f"{found.get('ArrayJobId', found['JobId'])}_{index}"
            details[job_id] = JobDetail(job_id, found["ExitCode"], int(restarts) if restarts.isdigit() else 0)
    return details


def parse_job_line(stdout: str) -> dict[str, str]:
    """``Key=value`` pairs of one ``scontrol -o show job`` line (values with spaces are cut at the space)."""
    first = stdout.split("\n", 1)[0]
    return dict(pair.split("=", 1) for pair in first.split() if "=" in pair)


# Values of StdOut/StdErr may hold spaces; each runs to the next " Key=" of the one-line form.
_OUTPUT = re.compile(r"(?:^|\s)(StdOut|StdErr)=(.*?)(?=\s[A-Z][A-Za-z/:_]*=|\s*$)")


def output_paths(stdout: str) -> tuple[str | None, str | None] | None:
    """(StdOut, StdErr) of one ``scontrol -o show job`` line; None when the line is not a job's."""
    first = stdout.split("\n", 1)[0]
    if not first.startswith("JobId="):
        return None
    return _paths(first)


_ARRAY_KEYS = re.compile(r"(?:^|\s)(ArrayJobId|ArrayTaskId)=(\S*)")
_NO_INDEX = "4294967294"  # how scontrol expands %a of the tasks still in an array's own record


def array_output_paths(stdout: str) -> dict[str, tuple[str | None, str | None]]:
    """Each task's (StdOut, StdErr) from ``scontrol -o show job <array id>`` (a line per record), keyed
    ``A_i``. The tasks still in the array's own record (``ArrayTaskId=1,3-5%2``) share a line, whose paths
    have ``%a`` expanded to 4294967294: with task ``i``'s index put there they are what ``scontrol -o show
    job A_i`` prints for it (checked on Slurm 22.05, with ``%A``, ``%a``, ``%j``, ``%x`` in the pattern)."""
    found: dict[str, tuple[str | None, str | None]] = {}
    for line in stdout.splitlines():
        if not line.startswith("JobId="):
            continue
        keys = dict(_ARRAY_KEYS.findall(line))
        array, tasks = keys.get("ArrayJobId", ""), keys.get("ArrayTaskId", "").split("%", 1)[0]
        if not array.isdigit() or not tasks:
            continue
        out, err = _paths(line)
        if tasks.isdigit() and tasks != _NO_INDEX:
            found[f"{array}_{tasks}"] = (out, err)
            continue
        try:
            indices = expand_indices(tasks)
        except ValueError:
            continue
        for index in indices:
            task_out = None if out is None else out.replace(_NO_INDEX, str(index))
            task_err = None if err is None else err.replace(_NO_INDEX, str(index))
            found.setdefault(f"{array}_{index}", (task_out, task_err))
    return found


def _paths(line: str) -> tuple[str | None, str | None]:
    found = dict(_OUTPUT.findall(line))

    def path(key: str) -> str | None:
        value = found.get(key, "").strip()
        return value if value and value not in ("(null)", "N/A") else None

    return path("StdOut"), path("StdErr")
