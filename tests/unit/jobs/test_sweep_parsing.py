"""What ``submit --array SPEC`` and ``--each FILE`` make of what the user wrote: every element, in order,
each with its command; anything else one BadSpec line, never another error."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.sweeps import (
    MAX_ELEMENTS,
    MAX_INDEX,
    SweepMember,
    SweepPlan,
    element_specs,
    parse_array,
    parse_each,
)

SWEEP = JobId("exp")
indices = st.integers(min_value=0, max_value=10**6)
steps = st.integers(min_value=1, max_value=10**6)
# a word as a user may write it on a line (no newline: a line is one element); shlex.quote keeps it whole
words = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=0, max_size=12)
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
values = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=10)


def _template(*command: str) -> JobSpec:
    return JobSpec(SWEEP, "local", "local", command)


@given(start=indices, length=st.integers(min_value=0, max_value=3 * MAX_ELEMENTS), step=steps)
def test_a_range_is_every_step_from_start_to_end_both_included_or_refused_past_the_limit(start: int, length: int,
                                                                                         step: int) -> None:
    expected = list(range(start, start + length + 1, step))
    spec = f"{start}-{start + length}:{step}"
    if len(expected) > MAX_ELEMENTS:
        with pytest.raises(BadSpec, match="more than the 10,000"):
            parse_array(spec)
    else:
        assert [e.index for e in parse_array(spec)] == expected
        if step == 1:
            assert [e.index for e in parse_array(f"{start}-{start + length}")] == expected


@given(n=indices)
def test_a_single_index_is_one_element(n: int) -> None:
    assert [e.index for e in parse_array(str(n))] == [n]


@given(start=indices, back=st.integers(min_value=1, max_value=100))
def test_a_range_that_ends_before_it_starts_is_refused(start: int, back: int) -> None:
    with pytest.raises(BadSpec, match="ends before it starts"):
        parse_array(f"{start + back}-{start}")


@pytest.mark.parametrize(("spec", "says"), [
    ("", "is not START-END"), ("1-", "is not START-END"), ("-3", "is not START-END"), ("a-b", "is not START-END"),
    ("1-5:0", "step of 1-5:0 must be 1 or more"), ("1-5:-1", "is not START-END"), ("٣", "is not START-END"),
    ("0-9999999999", "more than the 10,000"),
])
def test_a_bad_array_is_one_line_naming_it(spec: str, says: str) -> None:
    with pytest.raises(BadSpec, match=says) as refused:
        parse_array(spec)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("spec", ["99999999999999999999", "1000000001", "0-5:99999999999999999999",
                                  "7," + "9" * 5000, f"{MAX_INDEX}-{MAX_INDEX + 3}"])
def test_an_index_or_step_above_the_bound_is_refused_in_one_line(spec: str) -> None:
    # issue 38: 99999999999999999999 reached the store, whose integers it overflows (exit 3)
    with pytest.raises(BadSpec, match=r"is above 1,000,000,000, the largest index or step a sweep takes") as refused:
        parse_array(spec)
    assert "\n" not in str(refused.value) and len(str(refused.value)) < 200


def test_the_largest_index_is_taken() -> None:
    assert [e.index for e in parse_array(f"{MAX_INDEX - 1}-{MAX_INDEX}")] == [MAX_INDEX - 1, MAX_INDEX]


def test_an_index_given_twice_is_refused() -> None:
    with pytest.raises(BadSpec, match="index 3 is given twice"):
        SweepPlan(SWEEP, parse_array("0-5,3"))


@given(text=st.text(max_size=200))
def test_any_array_or_each_text_parses_or_is_one_badspec_line(text: str) -> None:
    for parse in (parse_array, parse_each):
        try:
            parse(text)
        except BadSpec as exc:
            assert "\n" not in str(exc)


@given(lines=st.lists(st.lists(words.filter(lambda w: "=" not in w), min_size=1, max_size=4), min_size=1,
                      max_size=20),
       noise=st.lists(st.sampled_from(["", "   ", "# a comment", "  # indented comment"]), max_size=5))
def test_plain_lines_are_appended_in_file_order_indexed_from_zero(lines: list[list[str]], noise: list[str]) -> None:
    text = "\n".join([*noise, *(shlex.join(line) for line in lines), *noise])
    plan = SweepPlan(SWEEP, parse_each(text), 3, "--each f")
    made = list(element_specs(_template("run", "--seed", "{}"), plan))
    assert [s.name for s in made] == [f"exp-{i}" for i in range(len(lines))]
    assert [s.command for s in made] == [("run", "--seed", str(i), *line) for i, line in enumerate(lines)]
    assert [s.member for s in made] == [SweepMember(SWEEP, i, 3) for i in range(len(lines))]


@given(rows=st.lists(st.dictionaries(keys, values, min_size=1, max_size=3), min_size=1, max_size=10))
def test_key_value_lines_fill_in_their_keys_wherever_the_command_names_them(rows: list[dict[str, str]]) -> None:
    used = sorted({key for row in rows for key in row})
    text = "\n".join(" ".join(shlex.quote(f"{k}={v}") for k, v in row.items()) for row in rows)
    template = _template("run", *(f"--{k}={{{k}}}" for k in used), "{}")
    if any(set(row) != set(used) for row in rows):  # a line that leaves a key of the command out
        with pytest.raises(BadSpec, match="which this line does not give"):
            list(element_specs(template, SweepPlan(SWEEP, parse_each(text), None, "--each f")))
        return
    made = list(element_specs(template, SweepPlan(SWEEP, parse_each(text), None, "--each f")))
    assert [s.command for s in made] == [("run", *(f"--{k}={row[k]}" for k in used), str(i))
                                         for i, row in enumerate(rows)]


def test_a_script_gets_its_placeholders_filled_in_and_the_shells_own_braces_are_left() -> None:
    template = JobSpec(SWEEP, "local", "local", script="echo {} {lr} ${HOME} {lr}x\n")
    made = list(element_specs(template, SweepPlan(SWEEP, parse_each("lr=0.1\nlr=0.2\n"), None, "--each f")))
    assert [s.script for s in made] == ["echo 0 0.1 ${HOME} 0.1x\n", "echo 1 0.2 ${HOME} 0.2x\n"]
    assert [s.command for s in made] == [(), ()]


@pytest.mark.parametrize(("text", "command", "says"), [
    ("", ("run",), "--each f: no elements"),
    ("# only\n\n  \n", ("run",), "--each f: no elements"),
    ("lr=1 --fast\n", ("run", "{lr}"), r"--each f line 1: mixes key=value pairs \(lr=1\) with plain arguments"),
    ("a\nlr=1 lr=2\n", ("run", "{lr}"), "--each f line 2: lr= is given twice"),
    ("lr=1\n", ("run",), "--each f line 1: lr= is used nowhere: the command has no {lr}"),
    ("lr=1\n", ("run", "{lr}", "{seed}"), r"--each f line 1: the command names \{seed\}, which this line does not"),
    ("--fast\n", ("run", "{lr}"), r"--each f line 1: the command names \{lr\}"),
    ("'open\n", ("run",), "--each f line 1: No closing quotation"),
])
def test_a_bad_each_file_is_one_line_naming_the_line(text: str, command: tuple[str, ...], says: str) -> None:
    with pytest.raises(BadSpec, match=says) as refused:
        list(element_specs(_template(*command), SweepPlan(SWEEP, parse_each(text, "--each f"), None, "--each f")))
    assert "\n" not in str(refused.value)


def test_more_elements_than_the_limit_are_refused() -> None:
    with pytest.raises(BadSpec, match="more than the 10,000"):
        parse_each("x\n" * (MAX_ELEMENTS + 1))
    assert len(parse_each("x\n" * MAX_ELEMENTS)) == MAX_ELEMENTS


def test_an_array_fills_in_only_the_index() -> None:
    made = list(element_specs(_template("run", "in-{}.txt", "{}"), SweepPlan(SWEEP, parse_array("1-5:2"))))
    assert [(s.name, s.command) for s in made] == [("exp-1", ("run", "in-1.txt", "1")),
                                                   ("exp-3", ("run", "in-3.txt", "3")),
                                                   ("exp-5", ("run", "in-5.txt", "5"))]
    with pytest.raises(BadSpec, match=r"an --array sweep fills in only \{\}"):
        list(element_specs(_template("run", "{lr}"), SweepPlan(SWEEP, parse_array("0-1"))))


def test_a_sweep_name_too_long_for_its_indices_is_refused() -> None:
    with pytest.raises(BadSpec, match="too long for its indices"):
        list(element_specs(_template("run"), SweepPlan(JobId("x" * 62), parse_array("0-10"))))
