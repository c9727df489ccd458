"""A pipeline file: steps that are jobs or sweeps, each waiting for others, read from TOML text (docs/pipelines.md).

Pure: the text and the file's name come in, a validated ``PipelineSpec`` (or one refusal line) goes out.
Reading the file, and the ``each`` files its steps name, is the caller's: ``parse_pipeline`` reads the
pipeline's own text; ``each_files`` says which files a step reads its elements from; ``with_elements``
takes their texts and finishes the checks that need them (``after_each``'s index sets, element names).

Every refusal is one line naming the file, the step and the key:
``study.toml: step "reduce": after: no step named "trian" (did you mean "train"?)``.
"""

from __future__ import annotations

import difflib
import shlex
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time
from typing import Any

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.names import name_problem
from dunscaith.domain.model.jobs.resources import NO_NEEDS, Need, Resources, parse_count, parse_needs
from dunscaith.domain.model.jobs.spec import JobSpec, submission_problem
from dunscaith.domain.model.jobs.sweeps import (
    MAX_ELEMENTS,
    SweepElement,
    SweepPlan,
    element_name,
    element_specs,
    parse_array,
    parse_each,
)
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind, PipelineMember, same_indices_problem
from dunscaith.domain.model.program import program_problem
from dunscaith.domain.model.shown import escaped, shown


class PipelineRefused(BadSpec):
    """The pipeline file cannot be run as written: one line naming the file, the step and the key.
    Nothing of it is recorded."""


MAX_STEPS = 500  # steps of one pipeline at most (docs/pipelines.md): each may be a sweep of 10,000 elements

STEP_KEYS = (
    "name",
    "command",
    "cluster",
    "array",
    "each",
    "max_running",
    "cpus",
    "memory",
    "time",
    "gpus",
    "queue",
    "account",
    "after",
    "after_any",
    "after_each",
)
FILE_KEYS = ("name", "cluster", "step")
_AFTER_KEYS = ("after", "after_any", "after_each")


@dataclass(frozen=True, slots=True)
class StepSpec:
    """One step as the file gives it, checked: a job, or a sweep (``array`` or ``each``)."""

    name: str  # the step's own name ("train"); its job or sweep is ``job``
    job: JobId  # PIPELINE.STEP: the job's name, or the sweep's (its elements PIPELINE.STEP-<i>)
    command: tuple[str, ...]
    cluster: str | None = None  # None: the pipeline's cluster, else submit's default (local)
    resources: Resources = NO_NEEDS
    array: str | None = None  # submit --array's SPEC, as written
    each: str | None = None  # submit --each's FILE, as written: relative to the pipeline file's folder
    max_running: int | None = None
    # the elements: parsed from ``array`` at once; from ``each`` only once its text is given (with_elements)
    elements: tuple[SweepElement, ...] | None = None
    after: tuple[str, ...] = ()  # step names, as in the file
    after_any: tuple[str, ...] = ()
    after_each: tuple[str, ...] = ()

    @property
    def is_sweep(self) -> bool:
        return self.array is not None or self.each is not None

    def waits_for(self) -> Iterator[tuple[str, str]]:
        """(key, step) of every step this one waits for, in the file's order of the keys."""
        for key in _AFTER_KEYS:
            for step in getattr(self, key):
                yield key, step


@dataclass(frozen=True, slots=True)
class PipelineSpec:
    name: JobId
    file: str  # the file's name as given, for messages
    steps: tuple[StepSpec, ...]  # in the file's order
    cluster: str | None = None  # the default of every step

    def step(self, name: str) -> StepSpec:
        return next(step for step in self.steps if step.name == name)

    def order(self) -> tuple[StepSpec, ...]:
        """The steps so that each comes after every step it waits for (the file's order where free)."""
        done: list[str] = []
        pending = list(self.steps)
        while pending:
            ready = next(s for s in pending if all(dep in done for _, dep in s.waits_for()))
            done.append(ready.name)
            pending.remove(ready)
        return tuple(self.step(name) for name in done)

    def dependencies(self, step: StepSpec) -> tuple[Dependency, ...]:
        """What ``step``'s job (every element of it, for a sweep) records it waits for, by job name."""
        return tuple(Dependency(self.step(dep).job, DependencyKind(key)) for key, dep in step.waits_for())

    def cluster_of(self, step: StepSpec, default: str = "local") -> str:
        """The cluster ``step`` runs on: its own, else the pipeline's, else ``default`` (submit's)."""
        return step.cluster or self.cluster or default

    def each_files(self) -> tuple[str, ...]:
        """The ``each`` files the steps name, as written (once each): the caller reads them for ``with_elements``."""
        return tuple(dict.fromkeys(step.each for step in self.steps if step.each is not None))

    @property
    def complete(self) -> bool:
        """Whether every step's elements are known (no ``each`` left to read)."""
        return all(step.elements is not None or not step.is_sweep for step in self.steps)


# --- reading the file ----------------------------------------------------------------------------------


def parse_pipeline(text: str, file: str, name: str | None = None) -> PipelineSpec:
    """The pipeline ``text`` (the contents of ``file``) describes; ``name`` (--name) overrides its ``name``.

    PipelineRefused in one line for: not TOML, an empty file, an unknown key, a value of the wrong type, a
    bad value (as submit refuses its flag), duplicate step names, a step name that is not a job name, an
    unknown step, a cycle, ``after_each`` between steps that are not sweeps of the same indices. Steps with
    an ``each`` file are checked whole once ``with_elements`` is given the file's text."""
    where = escaped(file)
    table = _toml(text, where)
    _unknown_keys(table, FILE_KEYS, where, "the file takes")
    pipeline_name = _pipeline_name(table, name, where)
    cluster = _cluster(table.get("cluster"), where)
    raw_steps = table.get("step")
    if raw_steps is None:
        raise PipelineRefused(f"{where}: step: no step given; a pipeline has at least one [[step]] table")
    if isinstance(raw_steps, dict):
        raise PipelineRefused(f"{where}: step: write each step as [[step]] (an array of tables), not [step]")
    if not isinstance(raw_steps, list):
        raise PipelineRefused(f"{where}: step: an array of tables ([[step]]), not {_kind(raw_steps)}")
    odd = next((s for s in raw_steps if not isinstance(s, dict)), None)
    if odd is not None:
        raise PipelineRefused(f"{where}: step: each step is a table ([[step]]), not {_kind(odd)}")
    if not raw_steps:
        raise PipelineRefused(f"{where}: step: no step given; a pipeline has at least one [[step]] table")
    if len(raw_steps) > MAX_STEPS:
        raise PipelineRefused(
            f"{where}: step: {len(raw_steps):,} steps, more than the {MAX_STEPS} a pipeline may "
            "have: split it into several pipelines"
        )
    steps: list[StepSpec] = []
    for number, raw in enumerate(raw_steps, start=1):
        step = _step(raw, number, pipeline_name, where)
        twice = next((s for s in steps if s.name == step.name), None)
        if twice is not None:
            raise PipelineRefused(
                f'{where}: step "{step.name}": name: given twice (steps {steps.index(twice) + 1} '
                f"and {number}); each step has its own name"
            )
        steps.append(step)
    pipeline = PipelineSpec(pipeline_name, file, tuple(steps), cluster)
    _check_dependencies(pipeline, where)
    _check_elements(pipeline, where)
    return pipeline


def with_elements(pipeline: PipelineSpec, each_texts: Mapping[str, str]) -> PipelineSpec:
    """``pipeline`` with the elements of every ``each`` step read from its file's text (``each_texts``: by the
    name the step gives), checked whole: the lines as submit --each reads them, ``after_each``'s index sets,
    every element's name. PipelineRefused in one line, naming the step and ``each``."""
    where = escaped(pipeline.file)
    steps = []
    for step in pipeline.steps:
        if step.each is not None and step.elements is None:
            if step.each not in each_texts:
                raise BadSpec(f"the text of each file {step.each!r} was not given")  # the caller's mistake
            source = f'{where}: step "{step.name}": each {shown(step.each)}'
            try:
                elements = parse_each(each_texts[step.each], source)
            except BadSpec as exc:
                raise PipelineRefused(str(exc)) from None
            step = replace(step, elements=elements)
        steps.append(step)
    done = replace(pipeline, steps=tuple(steps))
    _check_elements(done, where)
    return done


def step_jobs(
    pipeline: PipelineSpec, step: StepSpec, *, cluster: str, adapter: str, workdir: str | None, max_attempts: int
) -> tuple[JobSpec, ...]:
    """The spec of ``step``'s job, or of each element of its sweep (in the elements' order), as submit makes
    them, each with what the step waits for (``JobSpec.waits``): the cluster chosen (``step.cluster`` or the
    pipeline's, else the caller's default), its adapter and the job's folder the caller's. PipelineRefused
    naming the step for a command an element cannot be made of (a ``{key}`` no line gives...). Needs the
    elements: ``with_elements`` first for an ``each`` step."""
    where = f'{escaped(pipeline.file)}: step "{step.name}"'
    try:
        template = JobSpec(
            step.job, cluster, adapter, step.command, None, workdir, max_attempts, resources=step.resources
        )
        problem = submission_problem(template)
        if problem is not None:
            raise BadSpec(problem)
        waits, step_of = pipeline.dependencies(step), PipelineMember(pipeline.name, step.name)
        if not step.is_sweep:
            return (replace(template, waits=waits, step_of=step_of),)
        if step.elements is None:
            raise BadSpec("its elements are not read yet (with_elements)")
        source = f"array {shown(step.array)}" if step.array is not None else f"each {shown(step.each or '')}"
        plan = SweepPlan(step.job, step.elements, step.max_running, source)
        # the waits go on each element: after_each is an element's own (element i waits for element i)
        return tuple(replace(element, waits=waits, step_of=step_of) for element in element_specs(template, plan))
    except PipelineRefused:
        raise
    except BadSpec as exc:
        raise PipelineRefused(f"{where}: command: {exc}") from None


def _toml(text: str, where: str) -> dict[str, Any]:
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        said = str(exc)
        raise PipelineRefused(f"{where}: not TOML: {said[:1].lower()}{said[1:]}") from None
    if not table:
        raise PipelineRefused(
            f"{where}: the file is empty (nothing but blank lines and comments): a pipeline has a "
            "name and at least one [[step]] table"
        )
    return table


def _kind(value: object) -> str:
    """How a TOML value's type is named in a refusal: "a string", "an integer"..."""
    kinds: list[tuple[type | tuple[type, ...], str]] = [
        (bool, "a boolean"),
        (int, "an integer"),
        (float, "a float"),
        (str, "a string"),
        (list, "an array"),
        (dict, "a table"),
        ((datetime, date, time), "a date or time"),
    ]
    return next((word for kind, word in kinds if isinstance(value, kind)), type(value).__name__)


def _unknown_keys(table: Mapping[str, object], known: Sequence[str], where: str, takes: str) -> None:
    for key in table:
        if key not in known:
            near = difflib.get_close_matches(key, known, n=1)
            hint = f'did you mean "{near[0]}"? ' if near else ""
            raise PipelineRefused(f"{where}: {escaped(key)}: unknown key ({hint}{takes} {', '.join(known)})")


def _pipeline_name(table: Mapping[str, Any], given: str | None, where: str) -> JobId:
    if given is not None:
        return JobId(_a_name(given, "--name", where))
    name = table.get("name")
    if name is None:
        raise PipelineRefused(f'{where}: name: missing; give name = "..." in the file, or --name NAME')
    return JobId(_a_name(name, "name", where, " (the pipeline's name)"))


def _a_name(value: object, key: str, where: str, whose: str = "") -> str:
    """``value`` of ``key`` when it is a string and a name (``whose`` says whose, in the refusal)."""
    if not isinstance(value, str):
        raise PipelineRefused(f"{where}: {key}: a string{whose}, not {_kind(value)}")
    problem = name_problem(key, value)
    if problem is not None:
        raise PipelineRefused(f"{where}: {problem}")
    return value


def _cluster(value: object, where: str) -> str | None:
    return None if value is None else _a_name(value, "cluster", where, " (a cluster's name)")


def _step(raw: Mapping[str, Any], number: int, pipeline: JobId, where: str) -> StepSpec:
    here = f"{where}: step {number}"
    if raw.get("name") is None:
        raise PipelineRefused(f'{here}: name: missing; every step has one (name = "train")')
    name = _a_name(raw["name"], "name", here)
    if "." in name:
        raise PipelineRefused(
            f"{here}: name {shown(name)}: no '.' in a step's name ({pipeline}.STEP names its job, "
            "and must read one way); use '-' or '_'"
        )
    here = f'{where}: step "{name}"'
    _unknown_keys(raw, STEP_KEYS, here, "a step takes")
    job = JobId(f"{pipeline}.{name}")
    problem = name_problem("job name", job)
    if problem is not None:
        raise PipelineRefused(f"{here}: name: {problem} (the pipeline's name and the step's are too long together)")
    array, each, max_running = _sweep(raw, here)
    elements = None
    if array is not None:
        try:
            elements = parse_array(array)
        except BadSpec as exc:
            raise PipelineRefused(f"{here}: array: {str(exc).removeprefix('--array ')}") from None
    return StepSpec(
        name=name,
        job=job,
        command=_command(raw.get("command"), here),
        cluster=_cluster_of(raw, here),
        resources=_resources(raw, here),
        array=array,
        each=each,
        max_running=max_running,
        elements=elements,
        after=_names(raw, "after", here),
        after_any=_names(raw, "after_any", here),
        after_each=_names(raw, "after_each", here),
    )


def _cluster_of(raw: Mapping[str, Any], here: str) -> str | None:
    return _cluster(raw.get("cluster"), here)


def _command(value: object, here: str) -> tuple[str, ...]:
    if value is None:
        raise PipelineRefused(
            f'{here}: command: missing; give the program and its arguments (command = ["python", '
            '"train.py"], or one string split as a shell would)'
        )
    if isinstance(value, str):
        try:
            words = shlex.split(value)
        except ValueError as exc:  # an open quote, a trailing backslash
            raise PipelineRefused(f"{here}: command: {exc} (quote as a shell would)") from None
    elif isinstance(value, list) and all(isinstance(word, str) for word in value):
        words = list(value)
    elif isinstance(value, list):
        odd = next(word for word in value if not isinstance(word, str))
        raise PipelineRefused(f"{here}: command: every word is a string; {odd!r} is {_kind(odd)} (quote it)")
    else:
        raise PipelineRefused(f"{here}: command: an array of strings or one string, not {_kind(value)}")
    problem = program_problem(words)
    if problem is not None:
        raise PipelineRefused(f"{here}: command: {problem.replace(' after --', '')}")
    return tuple(words)


def _sweep(raw: Mapping[str, Any], here: str) -> tuple[str | None, str | None, int | None]:
    array, each, most = raw.get("array"), raw.get("each"), raw.get("max_running")
    if array is not None and each is not None:
        raise PipelineRefused(f"{here}: each: give array or each, not both (a step is one sweep)")
    for key, value in (("array", array), ("each", each)):
        if value is not None and not isinstance(value, str):
            what = 'the indices, as submit --array takes them ("0-99")' if key == "array" else "a file's name"
            raise PipelineRefused(f"{here}: {key}: a string ({what}), not {_kind(value)}")
    if each is not None and not each.strip():
        raise PipelineRefused(f"{here}: each: empty; give the file of the elements, one a line")
    if most is None:
        return array, each, None
    if array is None and each is None:
        raise PipelineRefused(f"{here}: max_running: only for a sweep (a step with array or each)")
    if isinstance(most, bool) or not isinstance(most, int | str):
        raise PipelineRefused(f"{here}: max_running: a whole number, not {_kind(most)}")
    return array, each, _parsed(parse_count, str(most), "max_running", here, MAX_ELEMENTS)


def _parsed(parse: Callable[..., Any], text: str, key: str, here: str, *more: Any) -> Any:
    try:
        return parse(text, key, *more)
    except BadSpec as exc:
        raise PipelineRefused(f"{here}: {key}: {str(exc).removeprefix(key + ' ')}") from None


# A step's keys for its needs (submit's flags for them: --cpus-per-task, --mem, --time, ...).
_STEP_NEEDS = {
    "cpus": Need.CPUS,
    "memory": Need.MEMORY,
    "time": Need.TIME_LIMIT,
    "gpus": Need.GPUS,
    "queue": Need.QUEUE,
    "account": Need.ACCOUNT,
}


def _resources(raw: Mapping[str, Any], here: str) -> Resources:
    """The step's needs, each read by the parser of submit's flag for it (resources.py), so a step takes
    exactly what submit takes: a whole number of cpus, ``8G`` (or 8192: M) of memory, ``1:00:00`` (or 60:
    minutes) of time, ``a100:2`` (or 2) gpus, a queue and an account as plain text."""
    given: dict[Need, tuple[str, str]] = {}
    for key, need in _STEP_NEEDS.items():
        value = raw.get(key)
        if value is None:
            continue
        numeric = need not in (Need.QUEUE, Need.ACCOUNT)
        if isinstance(value, bool) or not (isinstance(value, str) or (numeric and isinstance(value, int))):
            kind = "a string or a whole number" if numeric else "a string"
            raise PipelineRefused(f"{here}: {key}: {kind}, not {_kind(value)}")
        given[need] = (str(value), f"{key}:")  # a refusal says "cpus: 'x': a whole number ..."
    try:
        return parse_needs(given)
    except BadSpec as exc:
        raise PipelineRefused(f"{here}: {exc}") from None


def _names(raw: Mapping[str, Any], key: str, here: str) -> tuple[str, ...]:
    value = raw.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        raise PipelineRefused(f'{here}: {key}: an array of step names ({key} = ["{escaped(value)}"]), not a string')
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        odd = value if not isinstance(value, list) else next(n for n in value if not isinstance(n, str))
        raise PipelineRefused(f"{here}: {key}: an array of step names, not {_kind(odd)}")
    for index, name in enumerate(value):
        if name in value[:index]:
            raise PipelineRefused(f'{here}: {key}: "{escaped(name)}" is given twice')
    return tuple(value)


# --- the checks across steps ---------------------------------------------------------------------------


def _check_dependencies(pipeline: PipelineSpec, where: str) -> None:
    names = [step.name for step in pipeline.steps]
    for step in pipeline.steps:
        here = f'{where}: step "{step.name}"'
        seen: dict[str, str] = {}
        for key, dep in step.waits_for():
            if dep not in names:
                near = difflib.get_close_matches(dep, names, n=1)
                hint = f' (did you mean "{near[0]}"?)' if near else f" (the steps: {', '.join(names)})"
                raise PipelineRefused(f'{here}: {key}: no step named "{escaped(dep)}"{hint}')
            if dep in seen:
                raise PipelineRefused(
                    f'{here}: {key}: "{dep}" is in {seen[dep]} too; a step waits for another one way only'
                )
            seen[dep] = key
        for dep in step.after_each:
            other = pipeline.step(dep)
            if not step.is_sweep:
                raise PipelineRefused(
                    f'{here}: after_each: "{step.name}" is not a sweep (give it array or each), so '
                    f'it has no element i to wait for element i of "{dep}"; use after'
                )
            if not other.is_sweep:
                raise PipelineRefused(
                    f'{here}: after_each: "{dep}" is not a sweep (it has no array or each); use after'
                )
    cycle = _cycle(pipeline)
    if cycle is not None:
        first = pipeline.step(cycle[0])
        key = next(key for key, dep in first.waits_for() if dep == cycle[1])
        names = [f'"{name}"' for name in cycle]
        if len(names) > 8:  # one line stays readable: the cycle's start and end, and how long it is
            names = [*names[:4], f"... ({len(cycle) - 1} steps)", *names[-2:]]
        path = " -> ".join(names)
        raise PipelineRefused(f'{where}: step "{first.name}": {key}: a cycle: {path}; no step of it could ever start')


def _cycle(pipeline: PipelineSpec) -> list[str] | None:
    """A cycle of waits (``[a, b, a]``: a waits for b, b for a), starting at the first of its steps in the
    file's order; None when there is none."""
    state: dict[str, int] = {}  # 1: on the path being walked, 2: done (no cycle through it)

    def walk(name: str, path: list[str]) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for _, dep in pipeline.step(name).waits_for():
            if state.get(dep) == 1:
                loop = [*path[path.index(dep) :], dep]
                start = min(range(len(loop) - 1), key=lambda i: [s.name for s in pipeline.steps].index(loop[i]))
                return [*loop[start:-1], *loop[:start], loop[start]]
            if dep not in state:
                found = walk(dep, path)
                if found is not None:
                    return found
        path.pop()
        state[name] = 2
        return None

    for step in pipeline.steps:
        if step.name not in state:
            found = walk(step.name, [])
            if found is not None:
                return found
    return None


def _check_elements(pipeline: PipelineSpec, where: str) -> None:
    """What needs the elements: every element's name is a job name, no two jobs of the pipeline share a name
    (a step "train-3" and element 3 of the sweep "train"), ``after_each``'s two sweeps have the same indices.
    Checked for the steps whose elements are known."""
    owner: dict[str, str] = {}
    for step in pipeline.steps:
        here = f'{where}: step "{step.name}"'
        key = "array" if step.array is not None else "each"
        jobs: list[JobId] = [step.job]
        if step.elements is not None:
            try:
                jobs.extend(element_name(step.job, element.index) for element in step.elements)
            except BadSpec as exc:
                raise PipelineRefused(f"{here}: {key}: {exc}") from None
        for job in jobs:
            if job in owner and owner[job] != step.name:
                raise PipelineRefused(
                    f'{here}: name: its job {job} is also a job of step "{owner[job]}"; rename one of the two'
                )
            owner[job] = step.name
    for step in pipeline.steps:
        for dep in step.after_each:
            other = pipeline.step(dep)
            if step.elements is None or other.elements is None:
                continue
            problem = same_indices_problem(
                step.name, dep, {e.index for e in step.elements}, {e.index for e in other.elements}
            )
            if problem is not None:
                raise PipelineRefused(f'{where}: step "{step.name}": after_each: {problem}')
