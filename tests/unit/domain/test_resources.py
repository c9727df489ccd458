"""submit's formats for a job's needs, and how they are shown: the domain reads them once."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.resources import (
    Need,
    Resources,
    format_time_limit,
    parse_count,
    parse_gpus,
    parse_memory,
    parse_needs,
    parse_text,
    parse_time_limit,
)


@pytest.mark.parametrize("text", ["0", "-1", "abc", "", " ", "1.5", "1e3", "1000001", "99999999999999"])
def test_a_count_that_no_scheduler_could_give_is_refused_naming_the_flag(text: str) -> None:
    with pytest.raises(BadSpec, match=r"^-c .*: a whole number from 1 to"):
        parse_count(text, "-c")


@pytest.mark.parametrize(("text", "mb"), [("1", 1), ("4G", 4096), ("4g", 4096), ("512M", 512), ("1K", 1),
                                          ("1025K", 2), ("2T", 2 * 1024 * 1024), ("8GB", 8192)])
def test_memory_is_mib_rounded_up(text: str, mb: int) -> None:
    assert parse_memory(text, "--mem") == mb


@pytest.mark.parametrize("text", ["0", "abc", "10PB", "-1G", "", "1.5G", "4 G", "99999999999999999T"])
def test_memory_that_is_no_size_is_refused(text: str) -> None:
    with pytest.raises(BadSpec, match=r"^--mem .*: a size of at least 1K"):
        parse_memory(text, "--mem")


@pytest.mark.parametrize(("text", "seconds"), [("30", 1800), ("10:00", 600), ("1:02:03", 3723), ("1-0", 86400),
                                               ("1-12", 86400 + 12 * 3600), ("2-01:30", 2 * 86400 + 5400),
                                               ("1-00:00:01", 86401), ("0:01", 1)])
def test_time_limits_in_sbatchs_formats(text: str, seconds: int) -> None:
    assert parse_time_limit(text, "--time") == seconds


@pytest.mark.parametrize("text", ["0", "0:00", "abc", "-1", "1:2:3:4", "1-", "", "UNLIMITED", "99999-0"])
def test_a_time_limit_that_is_none_is_refused(text: str) -> None:
    with pytest.raises(BadSpec, match=r"^--time .*: a time limit of at least 1 second"):
        parse_time_limit(text, "--time")


@pytest.mark.parametrize("text", ["25:61:00", "1:60", "0:00:60", "1-00:60", "1-00:00:99", "10:75"])
def test_minutes_or_seconds_after_a_colon_of_60_or_more_are_refused(text: str) -> None:
    # issue 38: 25:61:00 was taken as 25 hours and 61 minutes
    with pytest.raises(BadSpec, match=r"^--time .*: minutes and seconds after a colon are 0 to 59"):
        parse_time_limit(text, "--time")


@pytest.mark.parametrize(("text", "seconds"), [("90", 5400), ("90:00", 5400), ("48:00:00", 172800),
                                               ("1-30", 86400 + 30 * 3600), ("0:59", 59)])
def test_the_first_field_may_be_as_large_as_it_likes(text: str, seconds: int) -> None:
    assert parse_time_limit(text, "--time") == seconds


def test_a_time_limit_is_shown_as_sbatch_reads_it() -> None:
    assert [format_time_limit(s) for s in (1, 3723, 86401)] == ["00:00:01", "01:02:03", "1-00:00:01"]


@pytest.mark.parametrize(("text", "parsed"), [("2", (2, None)), ("a100:2", (2, "a100"))])
def test_gpus_are_a_count_with_an_optional_type(text: str, parsed: tuple[int, None] | tuple[int, str]) -> None:
    assert parse_gpus(text, "--gpus") == parsed


@pytest.mark.parametrize("text", ["0", "a100:0", "a100:", ":2", "abc", "a b:1"])
def test_gpus_that_are_no_count_are_refused(text: str) -> None:
    with pytest.raises(BadSpec, match=r"^--gpus "):
        parse_gpus(text, "--gpus")


@pytest.mark.parametrize("text", ["", "a b", "x\ny", "a;b", "$(x)", "a" * 201])
def test_a_queue_or_account_is_plain_text(text: str) -> None:
    with pytest.raises(BadSpec, match=r"^-p .*: 1 to 200"):
        parse_text(text, "-p")


def test_a_long_value_is_shown_shortened() -> None:
    with pytest.raises(BadSpec) as raised:
        parse_count("9" * 5000, "-c")
    assert len(str(raised.value)) < 120


def test_needs_are_shown_in_a_fixed_order() -> None:
    needs = Resources(cpus=4, memory_mb=8192, time_limit_s=3600, gpus=2, gpu_type="a100", queue="short",
                      account="proj", qos="high", export="NONE")
    assert needs.shown() == ["cpus=4", "memory=8G", "time=01:00:00", "gpus=a100:2", "queue=short", "account=proj",
                             "qos=high", "export=NONE"]
    assert bool(needs) and not Resources()


def test_needs_given_as_text_are_read_each_by_its_parser_into_one_resources() -> None:
    given = {
        Need.CPUS: ("4", "--cpus"),
        Need.MEMORY: ("8G", "--mem"),
        Need.TIME_LIMIT: ("1:30:00", "--time"),
        Need.GPUS: ("a100:2", "--gpus"),
        Need.QUEUE: ("gpu", "--partition"),
        Need.ACCOUNT: ("proj", "--account"),
        Need.QOS: ("high", "--qos"),
        Need.EXPORT: ("NONE", "--export"),
    }
    assert parse_needs(given) == Resources(
        cpus=4, memory_mb=8192, time_limit_s=5400, gpus=2, gpu_type="a100", queue="gpu", account="proj",
        qos="high", export="NONE",
    )
    assert parse_needs({}) == Resources()


def test_the_first_need_that_does_not_read_is_refused_by_the_name_given_for_it() -> None:
    with pytest.raises(BadSpec, match=r"^--mem 'lots': a size"):
        parse_needs({Need.CPUS: ("2", "--cpus"), Need.MEMORY: ("lots", "--mem"), Need.TIME_LIMIT: ("x", "--time")})
