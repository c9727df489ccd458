"""``dunscaith events``: the record as a timeline, rendered (domain/model/jobs/timeline.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.record import EventLine, JobRecord
from dunscaith.domain.model.jobs.timeline import Actor, entry_json, json_lines, lines, timeline

T0 = datetime(2026, 12, 2, 10, 0, 0, tzinfo=UTC)


def _recorded(host: str = "login1", command: tuple[str, ...] = ("python", "train.py")) -> ev.JobRecorded:
    return ev.JobRecorded("demo", "hpc", "slurm", command, None, "/home/u", 2, host, "m1", "sqlite",
                          "/var/tmp/dunscaith-u/records.db", 1, 2)


def _record(*events: ev.Event | tuple[str, dict[str, object]]) -> JobRecord:
    out = []
    for seq, event in enumerate(events, start=1):
        kind, data = event if isinstance(event, tuple) else ev.encode(event)
        out.append(EventLine(seq, T0 + timedelta(seconds=seq), kind, data))
    return JobRecord(JobId("demo"), tuple(out))


def _two_attempts() -> JobRecord:
    return _record(
        _recorded(),
        ev.Submitting(1, Nonce("n1")), ev.Created(1, ObjectId("101")), ev.Confirmed(1, ObjectId("101")),
        ev.Released(1, ObjectId("101"), "/out/101", "/out/101"),
        ev.Observed(1, ObjectId("101"), "failed", 1, None, "NonZeroExitCode"),
        ev.Submitting(2, Nonce("n2")), ev.Unknown(2, "timed out"),
        ev.Absent(1),
        ev.Requested("r1", "cancel"), ev.Answered("r1", "confirmed", "no new attempt"),
        ev.OutcomeReached("cancelled", "cancelled by the user"), ev.Settled(),
    )


def test_every_line_in_order_with_a_heading_per_attempt() -> None:
    shown = list(lines(timeline(_two_attempts()), UTC))
    assert shown[0] == ("job demo: cluster hpc (slurm), submitted on host login1, recorded in "
                        "/var/tmp/dunscaith-u/records.db")
    assert shown[1] == ("  2026-12-02 10:00:01  submit@login1      recorded: python train.py (cluster hpc, slurm; "
                        "at most 2 attempts, in /home/u)")
    assert shown[2] == "attempt 1 (object 101)"
    assert shown[3] == ("  2026-12-02 10:00:02  supervisor@login1  sends the create request, held (nonce n1): "
                        "never sent twice")
    assert shown[4] == "  2026-12-02 10:00:03  scheduler          created 101, held"
    assert shown[6] == "  2026-12-02 10:00:05  supervisor@login1  released 101 (stdout /out/101)"
    assert shown[7] == "  2026-12-02 10:00:06  scheduler          101 failed, exit code 1: NonZeroExitCode"
    assert shown[8] == "attempt 2"
    assert shown[10].endswith("no answer to the create (an object may exist; never sent again): timed out")
    # attempt 1 again, after attempt 2 began: its heading again, said to continue
    assert shown[11] == "attempt 1 (object 101) (continued)"
    assert shown[12].endswith("scheduler          not listed by a complete query (absence alone is no ending)")
    # the request, the answer and the outcome go with the attempt in course: the latest begun
    assert shown[13] == "attempt 2 (continued)"
    assert shown[14] == "  2026-12-02 10:00:10  cancel@login1      asks to cancel (request r1)"
    assert shown[15] == "  2026-12-02 10:00:11  supervisor@login1  confirmed cancel (request r1): no new attempt"
    assert shown[16].endswith("outcome cancelled: cancelled by the user")
    assert shown[17].endswith("settled: nothing outstanding")
    assert len(shown) == 18


def test_who_acted() -> None:
    tl = timeline(_record(_recorded(), ev.Submitting(1, Nonce("n")), ev.Observed(1, ObjectId("7"), "running", None,
                                                                                      None, ""),
                          ev.Requested("r", "hold"), ev.Pruned()))
    assert [(e.actor, e.command) for e in tl.entries] == [
        (Actor.COMMAND, "submit"), (Actor.SUPERVISOR, None), (Actor.SCHEDULER, None), (Actor.COMMAND, "hold"),
        (Actor.COMMAND, "prune")]


def test_a_shared_store_names_no_host_on_its_lines() -> None:
    tl = timeline(_record(_recorded(), ev.Submitting(1, Nonce("n"))), "postgresql://db/records", bound=False)
    shown = list(lines(tl, UTC))
    assert shown[0] == ("job demo: cluster hpc (slurm), submitted on host login1, recorded in "
                        "postgresql://db/records (shared by login nodes)")
    assert shown[1].startswith("  2026-12-02 10:00:01  submit      recorded: ")
    assert shown[-1] == "  2026-12-02 10:00:02  supervisor  sends the create request, held (nonce n): never sent twice"
    assert {entry_json(tl, e)["host"] for e in tl.entries} == {None}
    bare = list(lines(timeline(_record(_recorded(host=""), ev.Settled()), "x", bound=False), UTC))
    assert bare[0] == "job demo: cluster hpc (slurm), recorded in x (shared by login nodes)"


def test_control_characters_are_escaped() -> None:
    tl = timeline(_record(_recorded(command=("echo", "a\nb\x1b[31m")), ev.Submitting(1, Nonce("n")),
                          ev.Refused(1, "bad\rline\x07")))
    shown = list(lines(tl, UTC))
    assert all("\n" not in s and "\r" not in s and "\x1b" not in s and "\x07" not in s for s in shown)
    assert "recorded: echo 'a\\nb\\x1b[31m'" in shown[1]
    assert shown[-1].endswith("refused the create, no object made: bad\\rline\\x07")
    # JSON escapes them itself: each object stays on its one line
    assert all(json.loads(text)["job"] == "demo" for text in json_lines(tl))
    assert len(list(json_lines(tl))) == 3


def test_a_line_this_build_does_not_read_is_shown_raw() -> None:
    tl = timeline(_record(_recorded(), ("from-the-future", {"x": 1}), ev.Settled()))
    shown = list(lines(tl, UTC))
    assert "from-the-future: not read by this build (unknown event kind 'from-the-future'" in shown[2]
    assert shown[3].endswith("settled: nothing outstanding")
    assert entry_json(tl, tl.entries[1])["readable"] is False


def test_the_json_shape() -> None:
    tl = timeline(_two_attempts())
    first = json.loads(next(iter(json_lines(tl))))
    assert set(first) == {"job", "seq", "at", "attempt", "kind", "actor", "command", "host", "text", "data",
                          "readable"}
    created = entry_json(tl, tl.entries[2])
    assert created == {"job": "demo", "seq": 3, "at": "2026-12-02T10:00:03+00:00", "attempt": 1, "kind": "created",
                       "actor": "scheduler", "command": None, "host": None, "text": "created 101, held",
                       "data": {"attempt": 1, "object_id": "101"}, "readable": True}
    cancel = entry_json(tl, tl.entries[9])
    assert (cancel["command"], cancel["host"], cancel["attempt"]) == ("cancel", "login1", 2)
    assert entry_json(tl, tl.entries[1])["host"] == "login1"  # the supervisor's, on the record's host
