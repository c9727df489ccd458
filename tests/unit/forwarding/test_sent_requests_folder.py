"""The caller's record of forwarded requests lives in ~/.config/dunscaith/forwarded: the config folder the
user made (0755, for their config.toml) is used as it is, never re-moded; only forwarded/ is dunscaith's."""

from __future__ import annotations

import os
import stat
import uuid
from datetime import UTC, datetime
from pathlib import Path

from dunscaith.adapters.transport.sent_requests import FileSentRequests
from dunscaith.domain.model.forwarding.recovery import SentRequest


def test_the_users_config_folder_keeps_its_mode_and_forwarded_is_made_0700(tmp_path: Path) -> None:
    config = tmp_path / ".config" / "dunscaith"
    config.mkdir(parents=True)
    os.chmod(config, 0o755)
    sent = FileSentRequests(config / "forwarded")
    rid = uuid.uuid4().hex
    sent.record(SentRequest(rid, "login2", "dunscaith", ("status",), datetime(2026, 12, 1, tzinfo=UTC)))
    assert sent.read(rid)[0].host == "login2"
    assert stat.S_IMODE(os.stat(config).st_mode) == 0o755
    assert stat.S_IMODE(os.stat(config / "forwarded").st_mode) == 0o700
