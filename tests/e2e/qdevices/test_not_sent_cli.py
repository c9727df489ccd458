"""Issue 22 item 14 on the real CLI: a live send with no network leaves the order unsent, not lost."""

from __future__ import annotations

import socket

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("address", ["refused", "no-such-name"])
def test_no_network_leaves_the_order_unsent_and_a_resume_sends_it(cli: Cli, address: str) -> None:
    down = f"http://127.0.0.1:{closed_port()}/v1/" if address == "refused" else "http://no-such-site.invalid/v1/"
    manifest = str(cli.manifest(orders=2))
    first = cli.run("send", manifest, "--live", spec={"mqss_base_url": down})
    assert first.returncode == 1, first.stderr
    assert "Stopped (not_sent)" in first.stderr and "nothing left the machine" in first.stderr
    assert "a job may exist" not in first.stderr and "Under way" not in first.stderr
    record = str(cli.only_record())
    assert f"Resume with: qdevices send {manifest} --live --resume {record} --max-order 2" in first.stderr
    listing = cli.run("jobs", record)
    assert "unsent" in listing.stdout and "lost" not in listing.stdout
    dry = cli.run("send", manifest)  # nothing charged, nothing blocks
    assert "0 s now" in dry.stdout and "Blocks a live run" not in dry.stdout
    again = cli.run("send", manifest, "--live", "--resume", record, "--max-order", "2")
    assert again.returncode == 0, again.stderr
    assert cli.posts_per_order() == {1: 1, 2: 1}  # each sent once, when the network was back
