"""The holes found in live runs, at the level of the domain and the send service (FakeSite, FakeClock)."""

from __future__ import annotations

from pathlib import Path

from dunscaith.domain.model.qdevices.answers import JobAnswer, JobRequestAnswer, job_id_readable, shown
from dunscaith.domain.model.qdevices.exits import StopReason
from dunscaith.domain.model.qdevices.redaction import MIN_SECRET_LENGTH, Redactor, too_short
from dunscaith.domain.services.qdevices.send import SendRequest, SendRun
from tests.unit.qdevices.service_kit import QASM, Bench, manifest


def service(bench: Bench, redactor: Redactor) -> SendRun:
    return SendRun(bench.records, bench.lock, bench.clock, bench.said, bench.interrupts, bench.rules,
                   poll_seconds=5, redact=redactor.clean, site=bench.site)


def send(bench: Bench, redactor: Redactor, resume: str | None = None, max_order: int | None = None):  # type: ignore[no-untyped-def]
    m = manifest(orders=1)
    req = SendRequest(m, "/m.toml", {1: QASM}, resume, max_order, (), bench.host, 42)
    return service(bench, redactor).live(req)


def test_the_record_keeps_its_own_fields_whatever_the_secrets_and_stays_resumable(tmp_path: Path) -> None:
    redactor = Redactor(["mqss", "run", "o1", "start"])  # words of the record itself
    bench = Bench(tmp_path)
    out = send(bench, redactor)
    assert out.exit == 0
    first = bench.records.read(out.record or "").lines[0].data
    assert (first["site"], first["run"], first["orders"], first["app"]) == ("mqss", "run", ["o1"], "qdevices")
    again = send(bench, redactor, resume=out.record, max_order=1)
    assert again.exit == 0, again.detail


def test_a_job_id_holding_a_secret_is_recorded_redacted_and_never_read(tmp_path: Path) -> None:
    token = "tok-0123456789abcdefghij"
    bench = Bench(tmp_path)
    bench.site.script("create", [JobRequestAnswer(JobAnswer.OK, f"job-{token}", 200)])
    out = send(bench, Redactor([token]))
    assert (out.exit, out.stop) == (1, StopReason.STATUS_ERROR)
    assert bench.view(out.record).order(1).job == "job-[REDACTED]"
    again = send(bench, Redactor([token]), resume=out.record)
    assert again.stop is StopReason.STATUS_ERROR
    assert [m for m, _ in bench.site.journal] == ["create"]  # no state read, on either call


def test_redacted_and_control_character_ids_are_not_readable() -> None:
    assert not job_id_readable("job-[REDACTED]") and not job_id_readable("a\nb")
    assert job_id_readable("0c1d2e3f") and job_id_readable("4101")


def test_ids_are_shown_escaped_on_one_line() -> None:
    assert shown("a\nb\r\x1b[2J") == "a\\nb\\r\\x1b[2J" and shown("plain-id") == "plain-id"


def test_the_minimum_secret_length_is_16() -> None:
    assert MIN_SECRET_LENGTH == 16 and too_short("mqss") and not too_short("x" * 16)
