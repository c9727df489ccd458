"""What a pipeline file (docs/pipelines.md) makes: every step as submit would make its job or sweep, or one
refusal line naming the file, the step and the key, never another error."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pipelines import (
    MAX_STEPS,
    PipelineRefused,
    PipelineSpec,
    parse_pipeline,
    step_jobs,
    with_elements,
)
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.sweeps import SweepMember
from dunscaith.domain.model.jobs.waits import Dependency, DependencyKind

STUDY = """
name = "study"
cluster = "hpc"

[[step]]
name = "train"
command = ["python", "train.py", "--seed", "{}"]
array = "0-99"
max_running = 10
time = "1:00:00"
memory = "8G"

[[step]]
name = "reduce"
command = "python reduce.py --out 'the results'"
after = ["train"]
cpus = 4

[[step]]
name = "plot"
command = "python plot.py"
after_any = ["reduce"]
cluster = "local"
"""


def refusal(text: str, name: str | None = None) -> str:
    with pytest.raises(PipelineRefused) as caught:
        parse_pipeline(text, "study.toml", name)
    line = str(caught.value)
    assert "\n" not in line
    return line


def test_the_example_reads_as_three_steps_with_submits_own_values() -> None:
    pipeline = parse_pipeline(STUDY, "study.toml")
    assert pipeline.name == "study" and pipeline.cluster == "hpc"
    train, reduce, plot = pipeline.steps
    assert train.job == "study.train" and train.command == ("python", "train.py", "--seed", "{}")
    assert train.array == "0-99" and train.max_running == 10 and train.elements is not None
    assert [e.index for e in train.elements] == list(range(100))
    assert train.resources == Resources(time_limit_s=3600, memory_mb=8192)
    assert reduce.command == ("python", "reduce.py", "--out", "the results")  # split as a shell would
    assert reduce.resources == Resources(cpus=4) and reduce.cluster is None
    assert plot.cluster == "local"
    assert [pipeline.cluster_of(s) for s in pipeline.steps] == ["hpc", "hpc", "local"]
    bare = parse_pipeline(_step('command = "true"'), "s.toml")
    assert bare.cluster_of(bare.steps[0]) == "local" and bare.cluster_of(bare.steps[0], "hpc") == "hpc"
    assert pipeline.dependencies(reduce) == (Dependency(JobId("study.train"), DependencyKind.AFTER),)
    assert pipeline.dependencies(plot) == (Dependency(JobId("study.reduce"), DependencyKind.AFTER_ANY),)
    assert pipeline.complete and pipeline.each_files() == ()


def test_name_given_on_the_command_line_overrides_the_files() -> None:
    pipeline = parse_pipeline(STUDY, "study.toml", "study2")
    assert pipeline.name == "study2" and [s.job for s in pipeline.steps] == [
        "study2.train",
        "study2.reduce",
        "study2.plot",
    ]


def test_the_order_puts_each_step_after_what_it_waits_for() -> None:
    text = """name = "p"
[[step]]
name = "c"
command = "true"
after = ["b", "a"]
[[step]]
name = "b"
command = "true"
after = ["a"]
[[step]]
name = "a"
command = "true"
"""
    assert [s.name for s in parse_pipeline(text, "p.toml").order()] == ["a", "b", "c"]


def test_step_jobs_are_submits_jobs_and_elements() -> None:
    pipeline = parse_pipeline(STUDY, "study.toml")
    train, reduce, _ = pipeline.steps
    elements = step_jobs(pipeline, train, cluster="hpc", adapter="slurm", workdir="/w", max_attempts=3)
    assert len(elements) == 100
    assert elements[7].name == "study.train-7" and elements[7].command[-1] == "7"
    assert elements[7].member == SweepMember(JobId("study.train"), 7, 10)
    assert elements[7].resources == train.resources and elements[7].cluster == "hpc"
    (job,) = step_jobs(pipeline, reduce, cluster="hpc", adapter="slurm", workdir="/w", max_attempts=3)
    assert job.name == "study.reduce" and job.member is None and job.resources.cpus == 4


def test_an_each_step_reads_its_elements_once_given_the_files_text() -> None:
    text = """name = "s"
[[step]]
name = "a"
command = "run {rate}"
each = "rates.txt"
[[step]]
name = "b"
command = "check {}"
array = "0-2"
after_each = ["a"]
"""
    pipeline = parse_pipeline(text, "s.toml")
    assert pipeline.each_files() == ("rates.txt",) and not pipeline.complete
    done = with_elements(pipeline, {"rates.txt": "rate=1\nrate=2\n# no\nrate=3\n"})
    assert done.complete
    jobs = step_jobs(done, done.step("a"), cluster="local", adapter="local", workdir=None, max_attempts=1)
    assert [j.command for j in jobs] == [("run", "1"), ("run", "2"), ("run", "3")]
    with pytest.raises(PipelineRefused) as caught:
        with_elements(pipeline, {"rates.txt": "rate=1\nrate=2\n"})
    assert str(caught.value) == (
        's.toml: step "b": after_each: "b" has 3 elements and "a" 2, not the same indices '
        '(index 2 is in "b" only); element i waits for element i, so both need the same '
        "indices"
    )
    with pytest.raises(PipelineRefused) as caught:
        with_elements(pipeline, {"rates.txt": "rate=1\nrate=2 x\nrate=3\n"})
    assert str(caught.value).startswith("s.toml: step \"a\": each 'rates.txt' line 2: mixes key=value pairs")


def _step(body: str, name: str = "a") -> str:
    return f'name = "study"\n[[step]]\nname = "{name}"\n{body}\n'


def _two(first: str, second: str) -> str:
    return (
        f'name = "study"\n[[step]]\nname = "train"\ncommand = "true"\n{first}\n'
        f'[[step]]\nname = "reduce"\ncommand = "true"\n{second}\n'
    )


# Every refusal the file can get, with its exact line.
REFUSALS = [
    ("name = ", "study.toml: not TOML: invalid value (at end of document)"),
    (
        "\n# nothing\n\n",
        "study.toml: the file is empty (nothing but blank lines and comments): a pipeline has a "
        "name and at least one [[step]] table",
    ),
    (
        "",
        "study.toml: the file is empty (nothing but blank lines and comments): a pipeline has a name and at least "
        "one [[step]] table",
    ),
    ('name = "study"\n', "study.toml: step: no step given; a pipeline has at least one [[step]] table"),
    ('name = "study"\nstep = []\n', "study.toml: step: no step given; a pipeline has at least one [[step]] table"),
    (
        'name = "study"\n[step]\nname = "a"\n',
        "study.toml: step: write each step as [[step]] (an array of tables), not [step]",
    ),
    ('name = "study"\nstep = 3\n', "study.toml: step: an array of tables ([[step]]), not an integer"),
    ('name = "study"\nstep = [1]\n', "study.toml: step: each step is a table ([[step]]), not an integer"),
    ('nmae = "study"\n', 'study.toml: nmae: unknown key (did you mean "name"? the file takes name, cluster, step)'),
    (
        '[[step]]\nname = "a"\ncommand = "true"\n',
        'study.toml: name: missing; give name = "..." in the file, or --name NAME',
    ),
    ("name = 3\n", "study.toml: name: a string (the pipeline's name), not an integer"),
    (
        'name = "a b"\n',
        "study.toml: name 'a b': use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit",
    ),
    ('name = "s"\ncluster = ["x"]\n', "study.toml: cluster: a string (a cluster's name), not an array"),
    (
        'name = "s"\ncluster = "../x"\n',
        "study.toml: cluster '../x': use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit",
    ),
    (
        'name = "study"\n[[step]]\ncommand = "true"\n',
        'study.toml: step 1: name: missing; every step has one (name = "train")',
    ),
    ('name = "study"\n[[step]]\nname = 7\n', "study.toml: step 1: name: a string, not an integer"),
    (
        _step('command = "true"', name="re duce"),
        "study.toml: step 1: name 're duce': use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or "
        "digit",
    ),
    (
        _step('command = "true"', name="re.duce"),
        "study.toml: step 1: name 're.duce': no '.' in a step's name (study.STEP names its job, and must read one "
        "way); use '-' or '_'",
    ),
    (
        _step('command = "true"', name="x" * 60),
        'study.toml: step "' + "x" * 60 + "\": name: job name 'study." + "x" * 60 + "': use 1 to 63 letters, digits, "
        "'.', '_' or '-', starting with a letter or digit (the pipeline's name and the step's are too long together)",
    ),
    (
        _step('command = "true"\ncolour = "red"'),
        'study.toml: step "a": colour: unknown key (did you mean "cluster"? a step takes name, command, cluster, '
        "array, each, max_running, cpus, memory, time, gpus, queue, account, after, after_any, after_each)",
    ),
    (
        _step('command = "true"\nafetr = ["b"]'),
        'study.toml: step "a": afetr: unknown key (did you mean "after"? a step takes name, command, cluster, array, '
        "each, max_running, cpus, memory, time, gpus, queue, account, after, after_any, after_each)",
    ),
    (
        _step(""),
        'study.toml: step "a": command: missing; give the program and its arguments (command = ["python", '
        '"train.py"], or one string split as a shell would)',
    ),
    (_step("command = 3"), 'study.toml: step "a": command: an array of strings or one string, not an integer'),
    (
        _step('command = ["python", 3]'),
        'study.toml: step "a": command: every word is a string; 3 is an integer (quote it)',
    ),
    (_step('command = "echo \'open"'), 'study.toml: step "a": command: No closing quotation (quote as a shell would)'),
    (_step("command = []"), 'study.toml: step "a": command: nothing to run: give a program'),
    (
        _step('command = ["", "x"]'),
        "study.toml: step \"a\": command: the program to run is empty (''): give a program's name or path",
    ),
    (
        _step('command = "true"\ncluster = 1'),
        'study.toml: step "a": cluster: a string (a cluster\'s name), not an integer',
    ),
    (
        _step('command = "true"\narray = "0-9"\neach = "f"'),
        'study.toml: step "a": each: give array or each, not both (a step is one sweep)',
    ),
    (
        _step('command = "true"\narray = 5'),
        'study.toml: step "a": array: a string (the indices, as submit --array takes them ("0-99")), not an integer',
    ),
    (_step('command = "true"\neach = 5'), 'study.toml: step "a": each: a string (a file\'s name), not an integer'),
    (
        _step('command = "true"\neach = " "'),
        'study.toml: step "a": each: empty; give the file of the elements, one a line',
    ),
    (
        _step('command = "true"\narray = "9-1"'),
        "study.toml: step \"a\": array: '9-1': the range 9-1 ends before it starts",
    ),
    (
        _step('command = "true"\nmax_running = 3'),
        'study.toml: step "a": max_running: only for a sweep (a step with array or each)',
    ),
    (
        _step('command = "true"\narray = "0-9"\nmax_running = 1.5'),
        'study.toml: step "a": max_running: a whole number, not a float',
    ),
    (
        _step('command = "true"\narray = "0-9"\nmax_running = 0'),
        "study.toml: step \"a\": max_running: '0': a whole number from 1 to 10,000",
    ),
    (_step('command = "true"\ncpus = 0'), "study.toml: step \"a\": cpus: '0': a whole number from 1 to 1,000,000"),
    (_step('command = "true"\ncpus = true'), 'study.toml: step "a": cpus: a string or a whole number, not a boolean'),
    (
        _step('command = "true"\nmemory = "8X"'),
        "study.toml: step \"a\": memory: '8X': a size of at least 1K, a number with an optional K, M, G or T (4G, "
        "512M; a bare number is M)",
    ),
    (
        _step('command = "true"\ntime = "1:99:00"'),
        "study.toml: step \"a\": time: '1:99:00': minutes and seconds after a colon are 0 to 59 (MINUTES, MM:SS, "
        "HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS: 90, 1:30:00, 1-00:00:00)",
    ),
    (
        _step('command = "true"\ngpus = "a100:0"'),
        "study.toml: step \"a\": gpus: 'a100:0': [TYPE:]COUNT with a count from 1 to 100,000 (2, a100:2)",
    ),
    (
        _step('command = "true"\nqueue = "a b"'),
        "study.toml: step \"a\": queue: 'a b': 1 to 200 letters, digits and ._,:@+=/%-",
    ),
    (_step('command = "true"\naccount = 12'), 'study.toml: step "a": account: a string, not an integer'),
    (
        _step('command = "true"\nafter = "b"'),
        'study.toml: step "a": after: an array of step names (after = ["b"]), not a string',
    ),
    (
        _step('command = "true"\nafter_any = [1]'),
        'study.toml: step "a": after_any: an array of step names, not an integer',
    ),
    (_two("", 'after = ["train", "train"]'), 'study.toml: step "reduce": after: "train" is given twice'),
    (_two("", 'after = ["trian"]'), 'study.toml: step "reduce": after: no step named "trian" (did you mean "train"?)'),
    (
        _two("", 'after_any = ["zzz"]'),
        'study.toml: step "reduce": after_any: no step named "zzz" (the steps: train, reduce)',
    ),
    (
        _two("", 'after = ["train"]\nafter_any = ["train"]'),
        'study.toml: step "reduce": after_any: "train" is in after too; a step waits for another one way only',
    ),
    (
        'name = "study"\n[[step]]\nname = "train"\ncommand = "a"\n[[step]]\nname = "train"\ncommand = "b"\n',
        'study.toml: step "train": name: given twice (steps 1 and 2); each step has its own name',
    ),
    (
        _two("", 'after = ["reduce"]'),
        'study.toml: step "reduce": after: a cycle: "reduce" -> "reduce"; no step of it could ever start',
    ),
    (
        _two('after_any = ["reduce"]', 'after = ["train"]'),
        'study.toml: step "train": after_any: a cycle: "train" -> "reduce" -> "train"; no step of it could ever start',
    ),
    (
        _two('array = "0-3"', 'after_each = ["train"]'),
        'study.toml: step "reduce": after_each: "reduce" is not a sweep (give it array or each), so it has no element '
        'i to wait for element i of "train"; use after',
    ),
    (
        _two("", 'array = "0-3"\nafter_each = ["train"]'),
        'study.toml: step "reduce": after_each: "train" is not a sweep (it has no array or each); use after',
    ),
    (
        _two('array = "0-3"', 'array = "1-4"\nafter_each = ["train"]'),
        'study.toml: step "reduce": after_each: "reduce" has 4 elements and "train" 4, not the same indices (index 4 '
        'is in "reduce" only); element i waits for element i, so both need the same indices',
    ),
    (
        _two('array = "0-3"', 'array = "0-2"\nafter_each = ["train"]'),
        'study.toml: step "reduce": after_each: "reduce" has 3 elements and "train" 4, not the same indices (index 3 '
        'is in "train" only); element i waits for element i, so both need the same indices',
    ),
    (
        'name = "study"\n[[step]]\nname = "t"\ncommand = "true"\narray = "3"\n[[step]]\nname = "t-3"\n'
        'command = "true"\n',
        'study.toml: step "t-3": name: its job study.t-3 is also a job of step "t"; rename one of the two',
    ),
    (
        'name = "' + "s" * 55 + '"\n[[step]]\nname = "t"\ncommand = "true"\narray = "1000000"\n',
        'study.toml: step "t": array: element name \'' + "s" * 55 + ".t-1000000': use 1 to 63 letters, digits, '.', "
        "'_' or '-', starting with a letter or digit (the sweep's name is too long for its indices)",
    ),
]


@pytest.mark.parametrize(("text", "line"), REFUSALS, ids=[str(n) for n in range(len(REFUSALS))])
def test_each_refusal_is_one_line_naming_the_file_the_step_and_the_key(text: str, line: str) -> None:
    assert refusal(text) == line


def test_a_bad_name_given_on_the_command_line_is_named_as_the_flag() -> None:
    assert refusal(STUDY, "a/b") == (
        "study.toml: --name 'a/b': use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"
    )


def test_a_command_an_element_cannot_be_made_of_is_refused_naming_the_step() -> None:
    pipeline = parse_pipeline(_step('command = "run {rate}"\narray = "0-2"'), "study.toml")
    with pytest.raises(PipelineRefused) as caught:
        step_jobs(pipeline, pipeline.steps[0], cluster="local", adapter="local", workdir=None, max_attempts=1)
    assert str(caught.value).startswith("study.toml: step \"a\": command: array '0-2': the command names {rate}")


def test_a_file_name_with_a_control_character_is_shown_escaped() -> None:
    with pytest.raises(PipelineRefused) as caught:
        parse_pipeline("", "a\nb.toml")
    assert str(caught.value).startswith("a\\nb.toml: the file is empty")


# --- any text: a PipelineSpec or one PipelineRefused line, never another error ---------------------------

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 200)
    | st.text(max_size=8)
    | st.sampled_from(["train", "reduce", "0-3", "1:00:00", "8G", "true", "echo {}"]),
    lambda inner: st.lists(inner, max_size=3),
    max_leaves=6,
)
_keys = st.sampled_from(
    [
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
        "bogus",
    ]
)


def _toml_value(value: object) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + "".join(ch if ch.isalnum() or ch in " -_.:{}" else "" for ch in value) + '"'
    assert isinstance(value, list)
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"


@settings(deadline=None)  # a loaded machine must not fail it: no timing is asserted
@given(st.lists(st.dictionaries(_keys, _values, max_size=6), max_size=4), st.booleans())
def test_any_file_of_steps_is_read_or_refused_in_one_line(steps: list[dict[str, object]], named: bool) -> None:
    text = ('name = "p"\n' if named else "") + "".join(
        "[[step]]\n" + "".join(f"{key} = {_toml_value(value)}\n" for key, value in step.items()) for step in steps
    )
    try:
        pipeline = parse_pipeline(text, "p.toml")
    except PipelineRefused as exc:
        line = str(exc)
        assert "\n" not in line and line.startswith("p.toml: ")
        return
    assert isinstance(pipeline, PipelineSpec)
    order = [s.name for s in pipeline.order()]
    for step in pipeline.steps:
        assert all(order.index(dep) < order.index(step.name) for _, dep in step.waits_for())


@settings(deadline=None)
@given(st.lists(st.text(max_size=6), min_size=1, max_size=5))
def test_a_command_list_is_kept_word_for_word_and_a_string_is_split_as_a_shell_would(words: list[str]) -> None:
    if not words[0] or any("\0" in w for w in words):
        return
    as_string = shlex.join(words)
    for command in (words, as_string):
        text = f'name = "p"\n[[step]]\nname = "a"\ncommand = {_quoted(command)}\n'
        try:
            pipeline = parse_pipeline(text, "p.toml")
        except PipelineRefused as exc:  # a word TOML's basic strings cannot hold is refused as not TOML only
            assert "\n" not in str(exc)
            continue
        assert pipeline.steps[0].command == tuple(words)


def _quoted(value: str | list[str]) -> str:
    import json

    return json.dumps(value)  # a JSON string is a TOML basic string, \u escapes included


def test_a_chain_of_the_most_steps_reads_a_cycle_through_all_is_named_and_one_more_is_refused() -> None:
    def chain(n: int, loop: bool = False) -> str:
        first = f'after = ["s{n - 1}"]\n' if loop else ""
        return 'name = "p"\n' + "".join(
            f'[[step]]\nname = "s{i}"\ncommand = "true"\n' + (f'after = ["s{i - 1}"]\n' if i else first)
            for i in range(n)
        )

    assert len(parse_pipeline(chain(MAX_STEPS), "p.toml").order()) == MAX_STEPS
    with pytest.raises(PipelineRefused) as caught:  # walked without running out of stack
        parse_pipeline(chain(MAX_STEPS, loop=True), "p.toml")
    assert str(caught.value) == (
        'p.toml: step "s0": after: a cycle: "s0" -> "s499" -> "s498" -> "s497" -> ... (500 steps) -> "s1" -> "s0"; '
        "no step of it could ever start"
    )
    with pytest.raises(PipelineRefused) as caught:
        parse_pipeline(chain(MAX_STEPS + 1), "p.toml")
    assert str(caught.value) == (
        "p.toml: step: 501 steps, more than the 500 a pipeline may have: split it into several pipelines"
    )
