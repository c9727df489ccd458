"""A sweep as one Slurm job array: its ``--array`` indices, its one batch script, and its tasks' names.

Every task of an array carries the array's job name (the sweep's, ``S``); dunscaith knows a task as the
element ``S-<index>`` (``domain/model/jobs/sweeps.element_name``), its object as ``<array id>_<index>``.
What Slurm 22.05 shows of an array, and what this module relies on, is in docs/slurm.md ("Sweeps as job
arrays") and ../shared/notes/slurm-arrays.md:

- ``squeue -r`` lists each task on a line of its own (``JobArrayID`` ``A_i``, ``ArrayTaskID`` ``i``); without
  ``-r`` the tasks still pending in the array's own record are one line, ``A_[1-5%2]``;
- an array whose pending tasks were cancelled together keeps one record without task indices, which
  ``sacct`` shows as ``A_[1-5%2]`` (the indices it was made with): ``expand_task_ids`` reads it;
- the batch script is one for every task: it dispatches on ``$SLURM_ARRAY_TASK_ID`` (``array_script``).
"""

from __future__ import annotations

import re
import secrets
import shlex
from collections.abc import Sequence
from functools import lru_cache

from dunscaith.adapters.scheduler.slurm.batch_script import SpecRefused, command_script
from dunscaith.domain.model.jobs.objects import ObjectSpec

# ``element_name(sweep, index)``: the sweep's name, '-', the index without leading zeros
_ELEMENT = re.compile(r"^(.+)-(0|[1-9][0-9]*)$")
# ``A_i`` (one task), ``A_[1-3,5%2]`` (tasks in the array's own record)
_TASK_ID = re.compile(r"^([0-9]+)_([0-9]+)$")
_TASK_RANGE = re.compile(r"^([0-9]+)_\[([0-9,:\-%]+)\]$")
# Slurm's "no task index" (NO_VAL - 1, as scontrol prints it for a record whose indices were dropped)
_NO_INDEX = 4294967294


@lru_cache(maxsize=8192)
def element_of(name: str) -> tuple[str, int] | None:
    """``("S", 7)`` for ``S-7``, the name a task of an array named ``S`` has to dunscaith; None otherwise."""
    match = _ELEMENT.match(name)
    return (match.group(1), int(match.group(2))) if match else None


def element(array_name: str, index: int) -> str:
    """The name of task ``index`` of an array named ``array_name``: ``S-7``."""
    return f"{array_name}-{index}"


def task_id(array_id: str, index: int) -> str:
    return f"{array_id}_{index}"


def task_index(text: str) -> int | None:
    """A task's index as squeue's ``ArrayTaskID`` or scontrol's ``ArrayTaskId`` prints it; None for a job that
    is not one task (``N/A``, a range of tasks still in one record, or the dropped index 4294967294)."""
    text = text.strip()
    if not text.isdigit():
        return None
    index = int(text)
    return None if index >= _NO_INDEX else index


def split_task_id(job_id: str) -> tuple[str, int] | None:
    """``("12", 3)`` for ``12_3``; None for any other id."""
    match = _TASK_ID.match(job_id)
    return (match.group(1), int(match.group(2))) if match else None


def expand_task_ids(job_id: str) -> list[str]:
    """The tasks an id names: ``12_[1-3,5%2]`` → ``12_1 12_2 12_3 12_5``; any other id, itself."""
    match = _TASK_RANGE.match(job_id)
    if match is None:
        return [job_id]
    array_id, spec = match.group(1), match.group(2).split("%", 1)[0]
    return [task_id(array_id, i) for i in expand_indices(spec)]


def expand_indices(spec: str) -> list[int]:
    """``1-3,5,7-11:2`` → ``[1, 2, 3, 5, 7, 9, 11]`` (sbatch's ``--array`` syntax, without ``%N``)."""
    indices: list[int] = []
    for part in spec.split(","):
        bounds, _, step_text = part.partition(":")
        first, _, last = bounds.partition("-")
        step = int(step_text) if step_text else 1
        if not first.isdigit() or (last and not last.isdigit()) or step < 1:
            raise ValueError(f"not an array index list: {spec!r}")
        indices += range(int(first), int(last or first) + 1, step)
    return indices


def compact_indices(indices: Sequence[int]) -> str:
    """Indices as sbatch's ``--array`` list, runs of consecutive ones as ranges: ``1-500``, ``1,3,5-9``."""
    ordered = sorted(indices)
    if not ordered:
        raise ValueError("an array has at least one index")
    if len(set(ordered)) != len(ordered):
        raise ValueError("an array's indices are distinct")
    if ordered[0] < 0:
        raise ValueError("an array's indices are 0 or more")
    parts = []
    start = previous = ordered[0]
    for index in [*ordered[1:], None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if index is not None:
            start = previous = index
    return ",".join(parts)


def array_spec(indices: Sequence[int], max_running: int | None) -> str:
    """``--array``'s value: the indices, then ``%N`` when at most N tasks may run at once."""
    if max_running is not None and max_running < 1:
        raise ValueError("max_running is at least 1")
    return compact_indices(indices) + (f"%{max_running}" if max_running is not None else "")


# ---- the one batch script -------------------------------------------------------------------------

def directives(script: str) -> tuple[str, ...]:
    """The ``#SBATCH`` lines sbatch reads from a batch script: those before its first command (sbatch stops
    at the first line that is neither blank nor a comment)."""
    found = []
    for line in script.splitlines()[1:]:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            break
        if stripped.startswith("#SBATCH"):
            found.append(stripped)
    return tuple(found)


def _interpreter(script: str) -> list[str]:
    """The ``#!`` line's interpreter and its one optional argument, as the kernel splits them."""
    line = script.split("\n", 1)[0][2:].strip()
    if not line:
        raise SpecRefused("a batch script must start with #! and the path of an interpreter")
    program, _, argument = line.partition(" ")
    argument = argument.strip()
    return [program, argument] if argument else [program]


def _delimiter(texts: Sequence[str]) -> str:
    """A here-document delimiter that is no line of any of ``texts``."""
    lines = {line for text in texts for line in text.splitlines()}
    while True:
        candidate = f"DUNSCAITH_ELEMENT_{secrets.token_hex(6)}"
        if candidate not in lines:
            return candidate


def _element_branch(index: int, spec: ObjectSpec, delimiter: str) -> str:
    """One ``case`` branch: the element's command exec'd exactly as a single job's script execs it, or its
    script's text run by its own ``#!`` interpreter from a here-document (``/dev/fd/3``), as the kernel
    runs a single job's script file: its interpreter, the optional argument, the script."""
    if spec.script is not None and spec.command:
        raise SpecRefused("a job spec has either a command or a script, not both")
    if spec.script is None:
        run = command_script(spec.command).removeprefix("#!/bin/sh\n")  # its exec line (a word may hold \n)
        return f"{index})\n{run};;\n"
    if not spec.script.startswith("#!"):
        raise SpecRefused("a batch script must start with #! and the path of an interpreter")
    run = " ".join(shlex.quote(word) for word in [*_interpreter(spec.script), "/dev/fd/3"])
    text = spec.script if spec.script.endswith("\n") else spec.script + "\n"
    return f"{index})\nexec {run} 3<<'{delimiter}'\n{text}{delimiter}\n;;\n"


def array_script(elements: Sequence[tuple[int, ObjectSpec]]) -> str:
    """One ``#!/bin/sh`` batch script for every task: a ``case`` on ``$SLURM_ARRAY_TASK_ID`` with a branch per
    element. The elements' scripts' ``#SBATCH`` lines are sbatch's options for the whole array, so they must
    be the same in every element (a command has none); they head this script as they would head each."""
    if not elements:
        raise SpecRefused("an array has at least one element")
    found = {directives(spec.script) if spec.script is not None else () for _, spec in elements}
    if len(found) != 1:
        raise SpecRefused("the elements' scripts carry different #SBATCH lines, and an array's tasks share one "
                          "set of sbatch options")
    [header] = found
    delimiter = _delimiter([spec.script for _, spec in elements if spec.script is not None])
    branches = "".join(_element_branch(index, spec, delimiter) for index, spec in elements)
    lines = "".join(f"{line}\n" for line in header)
    return (f"#!/bin/sh\n{lines}"
            "# dunscaith: one job array, a sweep's elements; each task runs its own element\n"
            'case "$SLURM_ARRAY_TASK_ID" in\n'
            f"{branches}"
            '*) echo "dunscaith: no element for array task $SLURM_ARRAY_TASK_ID" >&2; exit 127 ;;\n'
            "esac\n")
