"""VLQ and Piast-Q on the real CLI: kill -9 between every durable line and the next request, then resume.

The fakes' journals prove it: never a second job-making request for an order (VLQ: CreateJob or
SubmitJob of a metered job; Piast-Q: POST qdmi/), and never a cancel.
"""

from __future__ import annotations

import json
import random
import signal
from typing import Any

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow

# VLQ, one order: start, submitting, created, uploaded, submitted, status Submitted, Queued, Running,
# Finished, result = 10 durable lines. Piast-Q: start, submitting, submitted, status New, queued, running,
# completed, result = 8.
VLQ_LINES = 10
PIASTQ_LINES = 8


def rows(cli: Cli, record: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in cli.run("jobs", record, "--json").stdout.splitlines()]


def killed_then_resumed(cli: Cli, kill_after: int) -> tuple[str, Any, Any, dict[str, Any]]:
    """A one-order live run killed (-9) after its ``kill_after``-th durable line, then a resume that only
    collects and one that may send (--max-order 1): the record, both resumes and the order's row."""
    manifest = str(cli.manifest(orders=1))
    killed = cli.run("send", manifest, "--live", spec={"kill_after_lines": kill_after})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    record = str(cli.only_record())
    collect = cli.run("send", manifest, "--live", "--resume", record)
    send_more = cli.run("send", manifest, "--live", "--resume", record, "--max-order", "1")
    (row,) = rows(cli, record)
    return record, collect, send_more, row


def no_cancel(cli: Cli) -> None:
    kinds = ("cancel", "delete") if cli.site == "vlq" else ("cancel",)
    assert cli.fake.requests(*kinds) == []


@pytest.mark.parametrize("kill_after", range(1, VLQ_LINES))
def test_vlq_kill_9_after_each_durable_line_then_resume_never_makes_a_second_job(vlq_cli: Cli,
                                                                                kill_after: int) -> None:
    cli = vlq_cli
    record, collect, send_more, row = killed_then_resumed(cli, kill_after)
    creates, submits = cli.posts_per_order().get(1, 0), cli.submits_per_order().get(1, 0)
    if kill_after == 1:  # after the start line: nothing sent, the resume with --max-order sends it once
        assert (row["state"], row["outcome"], creates, submits) == ("final", "completed", 1, 1), send_more.stderr
    elif kill_after == 2:  # after "submitting", before CreateJob: lost, never sent
        assert (row["state"], creates, collect.returncode, send_more.returncode) == ("lost", 0, 2, 2)
    elif kill_after == 3:  # "created", no "uploaded": SubmitJob was never sent
        assert (row["state"], row["outcome"], creates, submits) == ("final", "not_submitted", 1, 0)
        assert collect.returncode == 0, collect.stderr
    elif kill_after == 4:  # "uploaded" just before SubmitJob, which was not sent: it may have been
        assert (row["state"], row["last_stop"], creates, submits) == ("open", "submit_unknown", 1, 0)
        assert collect.returncode == 1 and "submit_unknown" in collect.stderr
        done = cli.run("resolve", record, "1", "--none")  # the site shows the job never ran
        assert done.returncode == 0, done.stderr
        assert rows(cli, record)[0]["state"] == "final"
    else:
        assert (row["state"], row["outcome"], creates, submits) == ("final", "completed", 1, 1), collect.stderr
    no_cancel(cli)


@pytest.mark.parametrize("kill_after", range(1, PIASTQ_LINES))
def test_piastq_kill_9_after_each_durable_line_then_resume_never_sends_twice(piastq_cli: Cli,
                                                                            kill_after: int) -> None:
    cli = piastq_cli
    _record, collect, send_more, row = killed_then_resumed(cli, kill_after)
    posts = cli.posts_per_order().get(1, 0)
    if kill_after == 2:
        assert (row["state"], posts, collect.returncode, send_more.returncode) == ("lost", 0, 2, 2)
        assert "Piast-Q has no job list: ask PCSS" in collect.stderr
    else:
        assert (row["state"], row["outcome"], posts) == ("final", "completed", 1), (collect.stderr, send_more.stderr)
    no_cancel(cli)


def settle(cli: Cli, record: str) -> None:
    """What a person does after a kill: resolve what the site shows (nothing ran for a lost order here,
    as the kill came before the request; a submit_unknown job never left Configuring)."""
    for row in rows(cli, record):
        if row["state"] == "lost" or (row["state"] == "open" and row["last_stop"] == "submit_unknown"):
            done = cli.run("resolve", record, str(row["order"]), "--none")
            assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("site", ["vlq", "piastq"])
@pytest.mark.parametrize("during", [1, 2, 3])
def test_three_orders_a_kill_at_a_random_point_and_a_resume_send_each_order_once_and_end_final(
        request: pytest.FixtureRequest, site: str, during: int) -> None:
    cli: Cli = request.getfixturevalue(f"{site}_cli")
    lines = (VLQ_LINES if site == "vlq" else PIASTQ_LINES) - 1  # an order's lines after the start line
    kill_after = random.Random(f"{site}{during}").randint(2 + (during - 1) * lines, 1 + during * lines)
    manifest = str(cli.manifest(orders=3))
    killed = cli.run("send", manifest, "--live", spec={"kill_after_lines": kill_after})
    assert killed.returncode == -signal.SIGKILL
    record = str(cli.only_record())
    cli.run("send", manifest, "--live", "--resume", record)
    settle(cli, record)
    done = cli.run("send", manifest, "--live", "--resume", record, "--max-order", "3")
    assert done.returncode == 0, (kill_after, done.stderr)
    assert [r["state"] for r in rows(cli, record)] == ["final"] * 3, kill_after
    assert all(n == 1 for n in cli.posts_per_order().values()), (kill_after, cli.posts_per_order())
    if site == "vlq":
        assert all(n == 1 for n in cli.submits_per_order().values())
    no_cancel(cli)
