"""The caller's record of forwarded requests (adapters/transport/sent_requests.py), on real files.

A command reads only the requests it needs (by id, or those whose outcome is not known), and requests
whose outcome is known expire after RESOLVED_KEPT; one that may have run is never dropped.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dunscaith.adapters.transport import sent_requests as module
from dunscaith.adapters.transport.sent_requests import FileSentRequests
from dunscaith.domain.model.forwarding.recovery import (
    RESOLVED_KEPT,
    Received,
    SentRequest,
    encode_received,
    encode_sent,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _rid(n: int) -> str:
    return f"{n:032x}"


def _sent(n: int, host: str = "login1") -> SentRequest:
    return SentRequest(_rid(n), host, "/opt/ds/bin/dunscaith", ("status", f"j{n}"), T0)


def _end(n: int, verdict: str) -> Received:
    return Received(_rid(n), verdict, "X", 0, "blake3:" + "0" * 64, T0)


@pytest.fixture
def sent(tmp_path: Path) -> FileSentRequests:
    return FileSentRequests(tmp_path / "config" / "dunscaith" / "forwarded")


def _age(sent: FileSentRequests, n: int, days: float) -> None:
    when = (datetime.now(UTC) - timedelta(days=days)).timestamp()
    for name in os.listdir(sent.directory):
        if name.startswith(_rid(n)):
            os.utime(sent.directory / name, (when, when))


def test_only_requests_that_may_have_run_are_unsettled_and_only_they_are_read(
        sent: FileSentRequests, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(1, 6):
        sent.record(_sent(n))
    sent.ended(_end(1, "completed"))
    sent.ended(_end(2, "never ran"))
    sent.ended(_end(3, "may have run"))
    # 4: its session is still under way (no end); 5: answered since
    sent.ended(_end(5, "may have run"))
    sent.settle(_rid(5), "it ran and ended with exit status 0")
    read: list[str] = []
    original = FileSentRequests.read

    def counting(self: FileSentRequests, request_id: str) -> tuple[SentRequest, Received | None]:
        read.append(request_id)
        return original(self, request_id)

    monkeypatch.setattr(FileSentRequests, "read", counting)
    assert [s.request_id for s, _ in sent.unsettled("login1")] == [_rid(3), _rid(4)]
    assert sorted(read) == [_rid(3), _rid(4)]  # the resolved ones are not opened
    assert sent.unsettled("login2") == []
    assert sent.read(_rid(1))[1] == _end(1, "completed")  # by id: still there


def test_resolved_requests_expire_after_thirty_days_and_one_that_may_have_run_never(sent: FileSentRequests) -> None:
    for n in range(1, 5):
        sent.record(_sent(n))
    sent.ended(_end(1, "completed"))
    sent.ended(_end(2, "may have run"))
    sent.ended(_end(3, "completed"))
    # 4: no end at all (the caller was killed mid-session): may have run
    for n in (1, 2, 4):
        _age(sent, n, 31)
    _age(sent, 3, 29)
    now = datetime.now(UTC)
    assert sent.expire(now, RESOLVED_KEPT) == 1
    names = set(os.listdir(sent.directory))
    assert not any(name.startswith(_rid(1)) for name in names)
    assert f"{_rid(2)}.json" in names and f"{_rid(4)}.json" in names and f"{_rid(3)}.json" in names
    assert [s.request_id for s, _ in sent.unsettled("login1")] == [_rid(2), _rid(4)]
    _age(sent, 3, 31)
    assert sent.expire(now + timedelta(hours=1), RESOLVED_KEPT) == 0  # one pass a day at most
    assert sent.expire(now + module.EXPIRY_EVERY, RESOLVED_KEPT) == 1
    sent.settle(_rid(2), "answered")  # once answered, it ages like the others
    _age(sent, 2, 31)
    assert sent.expire(now + 2 * module.EXPIRY_EVERY, RESOLVED_KEPT) == 1
    assert [s.request_id for s, _ in sent.unsettled("login1")] == [_rid(4)]


def test_records_of_an_earlier_build_are_marked_once_from_their_own_files(sent: FileSentRequests) -> None:
    sent.directory.mkdir(parents=True, mode=0o700)  # as dunscaith makes it: an open one is refused
    for n, verdict in ((1, "completed"), (2, "may have run"), (3, None)):
        (sent.directory / f"{_rid(n)}.json").write_bytes(encode_sent(_sent(n)))
        if verdict is not None:
            (sent.directory / f"{_rid(n)}.end.json").write_bytes(encode_received(_end(n, verdict)))
    _age(sent, 1, 40)
    assert sent.expire(datetime.now(UTC), RESOLVED_KEPT) == 0  # nothing unmarked is judged
    assert [s.request_id for s, _ in sent.unsettled("login1")] == [_rid(2), _rid(3)]
    assert sent.expire(datetime.now(UTC), RESOLVED_KEPT) == 1  # now marked: the completed one goes
    assert [s.request_id for s, _ in sent.unsettled("login1")] == [_rid(2), _rid(3)]


def test_a_request_is_marked_before_it_is_recorded_and_never_recorded_twice(sent: FileSentRequests) -> None:
    sent.record(_sent(1))
    names = set(os.listdir(sent.directory))
    assert {f"{_rid(1)}.pending", f"{_rid(1)}.json"} <= names
    with pytest.raises(FileExistsError):
        sent.record(_sent(1))
    os.unlink(sent.directory / f"{_rid(1)}.json")  # a mark whose record never came (killed between them)
    assert sent.unsettled("login1") == []


def test_a_folder_that_cannot_be_read_expires_nothing_and_never_stops_the_command(tmp_path: Path) -> None:
    where = tmp_path / "forwarded"
    where.write_text("not a folder")
    assert FileSentRequests(where).expire(datetime.now(UTC), RESOLVED_KEPT) == 0
    assert FileSentRequests(where).unsettled("login1") == []


@pytest.mark.parametrize("mark_kept", [True, False])
def test_an_end_record_whose_unsynced_name_a_power_loss_took_leaves_the_request_answerable(
        sent: FileSentRequests, mark_kept: bool) -> None:
    # ended() syncs the end record's bytes, not its name: a power loss may take the name (and the mark's
    # removal) with it. Either way the request recorded before sending still reads, and nothing is damaged.
    sent.record(_sent(1))
    sent.ended(_end(1, "completed"))
    os.unlink(sent.directory / f"{_rid(1)}.end.json")
    if mark_kept:
        (sent.directory / f"{_rid(1)}.pending").touch()
    assert sent.read(_rid(1)) == (_sent(1), None)  # `dunscaith forwarded` asks the host, which answers alone
    assert [s.request_id for s, _ in sent.unsettled("login1")] == ([_rid(1)] if mark_kept else [])
