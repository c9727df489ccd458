"""The record's fields added for issue 11 (output paths at the release, a job spec's scheduler options and
environment): they round-trip, and a record written before them reads as it did."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from dunscaith.adapters.scheduler.slurm.sbatch_options import check_sbatch_options
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import StoreIdentity
from dunscaith.domain.model.jobs.spec import BadSpec, JobSpec
from dunscaith.domain.model.jobs.state import fold_events

SPEC = JobSpec(JobId("j"), "hpc", "slurm", ("true",), None, "/w", 3, ("--partition=debug", "--mem=1G"),
               ("A=1", "B=two words"))


def test_a_spec_with_options_and_env_round_trips_through_its_first_event() -> None:
    first = ev.JobRecorded.of(SPEC, StoreIdentity("memory", "here"))
    kind, data = ev.encode(first)
    assert data["options"] == ["--partition=debug", "--mem=1G"] and data["env"] == ["A=1", "B=two words"]
    assert ev.decode(kind, data).spec() == SPEC  # type: ignore[union-attr]
    assert SPEC.object_spec(Nonce("n")).env == {"A": "1", "B": "two words"}
    assert SPEC.object_spec(Nonce("n")).options == SPEC.options


def test_a_release_keeps_the_output_paths_and_an_older_release_reads_without_them() -> None:
    kind, data = ev.encode(ev.Released(1, ObjectId("7"), "/o/out", "/o/err"))
    assert ev.decode(kind, data) == ev.Released(1, ObjectId("7"), "/o/out", "/o/err")
    assert ev.decode("released", {"attempt": 1, "object_id": "7"}) == ev.Released(1, ObjectId("7"))


def test_a_first_event_written_before_options_and_env_reads_with_none() -> None:
    _, data = ev.encode(ev.JobRecorded.of(JobSpec(JobId("j"), "local", "local", ("true",)),
                                          StoreIdentity("memory", "here")))
    old = {k: v for k, v in data.items() if k not in ("options", "env")}
    spec = ev.decode("job-recorded", old).spec()  # type: ignore[union-attr]
    assert (spec.options, spec.env) == ((), ())


def test_a_spec_with_needs_round_trips_and_one_written_before_needs_keeps_its_sbatch_options() -> None:
    """Issue 21: needs are recorded beside the scheduler's own options; a record made before them holds
    its resources as sbatch options, which still reach sbatch as they did."""
    from dataclasses import replace

    from dunscaith.adapters.scheduler.slurm.batch_script import sbatch_args
    from dunscaith.domain.model.jobs.resources import Resources

    needs = Resources(cpus=4, memory_mb=1024, time_limit_s=600, gpus=2, gpu_type="a100", queue="debug",
                      account="p", qos="q", export="NONE")
    spec = replace(SPEC, options=("--constraint=x",), resources=needs)
    kind, data = ev.encode(ev.JobRecorded.of(spec, StoreIdentity("memory", "here")))
    assert (data["cpus"], data["memory_mb"], data["queue"]) == (4, 1024, "debug")
    assert ev.decode(kind, data).spec() == spec  # type: ignore[union-attr]
    old = {k: v for k, v in ev.encode(ev.JobRecorded.of(SPEC, StoreIdentity("memory", "here")))[1].items()
           if k not in ("cpus", "memory_mb", "time_limit_s", "gpus", "gpu_type", "queue", "account", "qos", "export")}
    before = ev.decode("job-recorded", old).spec()  # type: ignore[union-attr]
    assert before.resources == Resources() and before.options == ("--partition=debug", "--mem=1G")
    assert sbatch_args(before.object_spec(Nonce("n")), None)[:2] == ["--partition=debug", "--mem=1G"]


def test_a_field_that_is_not_a_string_list_is_refused() -> None:
    _, data = ev.encode(ev.JobRecorded.of(SPEC, StoreIdentity("memory", "here")))
    with pytest.raises(ev.EventUndecodable):
        ev.decode("job-recorded", {**data, "env": [1]})


def test_the_state_keeps_paths_and_times_of_an_attempt() -> None:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    at = [t0 + timedelta(seconds=s) for s in range(8)]
    state = fold_events([
        (at[0], ev.JobRecorded.of(SPEC, StoreIdentity("memory", "here"))),
        (at[1], ev.Submitting(1, Nonce("n"))), (at[2], ev.Created(1, ObjectId("7"))),
        (at[3], ev.Confirmed(1, ObjectId("7"))), (at[4], ev.Released(1, ObjectId("7"), "/o", "/e")),
        (at[5], ev.Observed(1, ObjectId("7"), "running", None, None, "")),
        (at[6], ev.Observed(1, ObjectId("7"), "completed", 0, None, "")),
        (at[7], ev.OutcomeReached("succeeded", "exit code 0")),
    ])
    a = state.attempts[0]
    assert (a.stdout, a.stderr, a.released_at, a.started_at, a.ended_at) == ("/o", "/e", at[4], at[5], at[6])
    assert state.outcome_at == at[7]


@pytest.mark.parametrize("env", [("NOEQUALS",), ("=x",), ("1A=x",), ("A-B=x",)])
def test_an_environment_pair_must_be_name_equals_value(env: tuple[str, ...]) -> None:
    with pytest.raises(BadSpec):
        JobSpec(JobId("j"), "local", "local", ("true",), env=env)


@pytest.mark.parametrize("options", [["--hold"], ["-H"], ["--ho"], ["--job-name=x"], ["-Jname"], ["-va"], ["-vH"],
                                     ["--comment=x"], ["--parsable"], ["--wait"], ["-W"], ["--chdir=/"], ["-D/"],
                                     ["--array=1-2"], ["-M", "c"], ["--wrap=true"]])
def test_options_dunscaith_owns_are_refused_however_spelt(options: list[str]) -> None:
    with pytest.raises(BadSpec, match="not allowed"):
        check_sbatch_options(options)


@pytest.mark.parametrize("options", [["--partition=debug"], ["-pdebug"], ["-pH"], ["-v"], ["--mem=4G"],
                                     ["-c", "4"], ["--export=ALL"], ["--constraint=a100"], ["-t10:00"]])
def test_other_options_pass(options: list[str]) -> None:
    check_sbatch_options(options)  # -pH is the partition "H", not a hold


def test_the_events_that_carry_needs_carry_every_need_under_its_own_name() -> None:
    from dataclasses import fields

    from dunscaith.domain.model.jobs.resources import Resources

    needs = [f.name for f in fields(Resources)]
    assert [f.name for f in fields(ev.NeedFields)] == needs
    for kind in (ev.JobRecorded, ev.Submitting, ev.Requested):
        assert set(needs) <= {f.name for f in fields(kind)}
