"""A sweep: many related jobs (its elements) submitted together and supervised by one process.

Each element is an ordinary job, recorded under ``NAME-<index>`` with its own record, attempts and
guarantees; what makes it an element is the membership its first event records. Every rule that finds
objects by a job's name (the residual list, sweeps of strays, ``stop --emergency``) therefore finds an
element's objects by the element's own name, as it finds any job's.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import Field, dataclass, replace
from typing import Any, ClassVar, Protocol, TypeVar

from dunscaith.domain.model.jobs.errors import BadSpec, JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import name_problem


class NameTaken(JobsError):
    """A sweep or a job cannot be recorded under its name: a job or a sweep of that name is recorded, or one
    of the sweep's element names is taken. Nothing was recorded."""


@dataclass(frozen=True, slots=True)
class SweepMember:
    """That a job is one element of a sweep: recorded in its first event, never changed."""

    sweep: JobId  # the sweep's name: what the user gives `status`, `supervise`, `cancel`...
    index: int  # the element's index: its job is named ``element_name(sweep, index)``
    max_running: int | None = None  # at most this many elements of the sweep run at once (None: no bound)

    def __post_init__(self) -> None:
        if self.index < 0:
            raise BadSpec(f"element index {self.index}: an index is 0 or more")
        if self.max_running is not None and self.max_running < 1:
            raise BadSpec("--max-running must be at least 1")


def element_name(sweep: JobId, index: int) -> JobId:
    """The job name of a sweep's element: the sweep's name, '-', its index (``exp-7``)."""
    name = f"{sweep}-{index}"
    problem = name_problem("element name", name)
    if problem is not None:
        raise BadSpec(f"{problem} (the sweep's name is too long for its indices)")
    return JobId(name)


# --- what the user asks for: ``submit --name NAME (--array SPEC | --each FILE) [--max-running N]`` ---------

MAX_ELEMENTS = 10_000  # elements of one sweep at most (docs/sweeps.md, "Limits")
# The largest index (and step) --array takes (docs/sweeps.md, "Limits"): far above any array a scheduler
# runs (Slurm's MaxArraySize is at most 4,000,001), far below the store's 64-bit integers.
MAX_INDEX = 1_000_000_000

# A placeholder in a command's word or a script's text: ``{}`` (the element's index) or ``{key}`` (a value of
# the element's key=value line). ``${key}`` is the shell's own and is left as it is.
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)?\}")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_RANGE = re.compile(r"(\d+)(?:-(\d+)(?::(\d+))?)?", re.ASCII)


@dataclass(frozen=True, slots=True)
class SweepElement:
    """One element as the user described it: its index, and what its line of --each gave (nothing for --array)."""

    index: int
    arguments: tuple[str, ...] = ()  # appended to the command's words (a plain line of --each)
    values: tuple[tuple[str, str], ...] = ()  # substituted as {key} (a key=value line of --each)
    line: int | None = None  # the line of the --each file it came from (for messages)

    def where(self, source: str) -> str:
        return f"{source} line {self.line}" if self.line is not None else f"{source} element {self.index}"


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """A sweep to record: its name, its elements (indices distinct, 1 to MAX_ELEMENTS), --max-running."""

    name: JobId
    elements: tuple[SweepElement, ...]
    max_running: int | None = None
    source: str = "--array"  # which flag described the elements, for messages: "--array", "--each FILE"

    def __post_init__(self) -> None:
        if not self.elements:
            raise BadSpec(f"{self.source}: no elements (a sweep has at least one)")
        if len(self.elements) > MAX_ELEMENTS:
            raise BadSpec(f"{self.source}: {len(self.elements)} elements, more than the {MAX_ELEMENTS:,} a sweep "
                          "may have: split it into several sweeps")
        seen: set[int] = set()
        for element in self.elements:
            if element.index in seen:
                raise BadSpec(f"{self.source}: index {element.index} is given twice (each element has its own)")
            seen.add(element.index)
        if self.max_running is not None and self.max_running < 1:
            raise BadSpec("--max-running must be at least 1")


def parse_array(spec: str) -> tuple[SweepElement, ...]:
    """``--array``'s elements: ``START-END[:STEP]`` (both ends included, STEP 1 or more) or ``N``, or several
    of those joined by commas (``0-9,20,30-40:5``); BadSpec in one line otherwise."""
    indices: list[int] = []
    for part in spec.split(","):
        found = _RANGE.fullmatch(part.strip())
        if found is None:
            raise BadSpec(f"--array {spec!r}: {part.strip()!r} is not START-END[:STEP] or N (as 0-99, 1-99:2, 7)")
        start = _digits(found[1], spec)
        end = _digits(found[2], spec) if found[2] is not None else start
        step = _digits(found[3], spec) if found[3] is not None else 1
        if end < start:
            raise BadSpec(f"--array {spec!r}: the range {part.strip()} ends before it starts")
        if step < 1:
            raise BadSpec(f"--array {spec!r}: the step of {part.strip()} must be 1 or more")
        if len(indices) + (end - start) // step + 1 > MAX_ELEMENTS:
            raise BadSpec(f"--array {spec!r}: more than the {MAX_ELEMENTS:,} elements a sweep may have: split it "
                          "into several sweeps")
        _within_bound(max(start, end, step), spec)
        indices.extend(range(start, end + 1, step))
    return tuple(SweepElement(i) for i in indices)


def _digits(digits: str, spec: str) -> int:
    """An index or a step of ``--array`` as a number; one far too long to read is refused at once (int() of
    thousands of digits is refused by Python itself)."""
    if len(digits.lstrip("0")) > 2 * len(str(MAX_INDEX)):
        _within_bound(None, spec, digits)
    return int(digits)


def _within_bound(number: int | None, spec: str, digits: str = "") -> None:
    if number is None or number > MAX_INDEX:
        text = digits or str(number)
        shown = text if len(text) <= 24 else text[:21] + "..."
        given = spec if len(spec) <= 40 else spec[:37] + "..."
        raise BadSpec(f"--array {given!r}: {shown} is above {MAX_INDEX:,}, the largest index or step a sweep "
                      "takes")


def parse_each(text: str, source: str = "--each") -> tuple[SweepElement, ...]:
    """``--each FILE``'s elements, indexed 0.. in the file's order: one per line that is neither blank nor a
    comment ('#' first). A line is split as a shell would (quotes honoured); it is either plain arguments,
    appended to the command, or key=value pairs only, each substituted as {key}: never both."""
    elements: list[SweepElement] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            words = shlex.split(stripped)
        except ValueError as exc:  # an open quote, a trailing backslash
            raise BadSpec(f"{source} line {number}: {exc} (quote as a shell would)") from None
        pairs = [_KEY.fullmatch(word) for word in words]
        index = len(elements)
        if all(pairs):
            values: dict[str, str] = {}
            for pair in pairs:
                assert pair is not None
                if pair[1] in values:
                    raise BadSpec(f"{source} line {number}: {pair[1]}= is given twice")
                values[pair[1]] = pair[2]
            elements.append(SweepElement(index, values=tuple(values.items()), line=number))
        elif any(pairs):
            pair = next(p for p in pairs if p is not None)
            raise BadSpec(f"{source} line {number}: mixes key=value pairs ({pair[0]}) with plain arguments; a "
                          "line is one or the other")
        else:
            elements.append(SweepElement(index, arguments=tuple(words), line=number))
        if len(elements) > MAX_ELEMENTS:
            raise BadSpec(f"{source}: more than the {MAX_ELEMENTS:,} elements a sweep may have: split it into "
                          "several sweeps")
    if not elements:
        raise BadSpec(f"{source}: no elements (every line is blank or a comment)")
    return tuple(elements)


class _Template(Protocol):
    """What a sweep's elements are made from: a job's spec (domain/model/jobs/spec.py, which imports this
    module), named as the sweep; a dataclass, which ``replace`` makes each element's spec of."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def command(self) -> tuple[str, ...]: ...

    @property
    def script(self) -> str | None: ...


_Spec = TypeVar("_Spec", bound=_Template)


def substituted(text: str, element: SweepElement, source: str) -> str:
    """``text`` with ``{}`` as the element's index and each ``{key}`` as its value; BadSpec naming a key
    the element does not give."""
    values = dict(element.values)

    def one(found: re.Match[str]) -> str:
        key = found[1]
        if key is None:
            return str(element.index)
        if key not in values:
            if element.line is None:
                raise BadSpec(f"{source}: the command names {{{key}}}, but an --array sweep fills in only {{}} (the "
                              f"index); {{{key}}} comes from --each key=value lines (${{{key}}} is left to the shell)")
            given = "".join(f", {{{k}}}" for k in values)
            raise BadSpec(f"{element.where(source)}: the command names {{{key}}}, which this line does not give "
                          f"(it fills in {{}}{given}; ${{{key}}} is left to the shell)")
        return values[key]

    return _PLACEHOLDER.sub(one, text)


def element_specs(template: _Spec, plan: SweepPlan) -> Iterator[_Spec]:
    """Each element's spec, in the plan's order: the template's, named ``element_name(sweep, index)``, its
    placeholders substituted, a plain line's arguments appended, and its membership. BadSpec in one line
    for an element that cannot be made (a key the command does not use, a name too long...)."""
    used = {found[1] for text in (*template.command, template.script or "") for found in _PLACEHOLDER.finditer(text)}
    for element in plan.elements:
        unused = [key for key, _ in element.values if key not in used]
        if unused:
            raise BadSpec(f"{element.where(plan.source)}: {unused[0]}= is used nowhere: the command has no "
                          f"{{{unused[0]}}}")
        if element.arguments and template.script is not None:
            raise BadSpec(f"{element.where(plan.source)}: plain arguments need a COMMAND (after --) to be "
                          "appended to; a SCRIPT takes key=value lines")
        command = tuple(substituted(word, element, plan.source) for word in template.command) + element.arguments
        script = substituted(template.script, element, plan.source) if template.script is not None else None
        yield replace(template, name=element_name(plan.name, element.index), command=command,
                      script=script, member=SweepMember(plan.name, element.index, plan.max_running))


def resubmit_refusal(state: str, outcome: str | None, settled: bool) -> str | None:
    """Why ``resubmit NAME --failed`` leaves an element alone (its summary's state, outcome and whether it
    settled), or None when it is one to run again: an element that failed and settled. Never one that
    succeeded (its result stands), never one that may still run (no outcome yet, or work outstanding
    after it: an object of unknown fate), never one that ended otherwise (cancelled, refused, escalated,
    abandoned: a person decided, or must). A cheap choice from summaries: each element chosen is then
    asked as any job is, and ``requests.rerun_refusal`` on its record has the last word."""
    if outcome is None:
        return f"{state}: not resubmitted (no outcome yet: it may still run)"
    if outcome != "failed":
        return f"{outcome}: not resubmitted"
    if not settled:
        return "failed: not resubmitted (not settled: an object of it may still run)"
    return None
