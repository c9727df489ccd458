"""Issue 22 item 15: a dry run exits as the live run would (budget, shots rule, a blocking order)."""

from __future__ import annotations

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow


def test_a_dry_run_whose_budget_stops_the_first_order_exits_1_as_the_live_run(cli: Cli) -> None:
    manifest = str(cli.manifest(orders=2, limit=60, budget=50))
    dry = cli.run("send", manifest)
    assert dry.returncode == 1, dry.stdout + dry.stderr
    assert "A live run would stop (budget) before order 1 (o1)" in dry.stdout
    live = cli.run("send", manifest, "--live")
    assert live.returncode == dry.returncode and "Stopped (budget)" in live.stderr
    assert cli.posts_per_order() == {}


def test_a_dry_run_whose_budget_may_stop_a_later_order_says_so_and_exits_1(cli: Cli) -> None:
    dry = cli.run("send", str(cli.manifest(orders=3, limit=60, budget=150)))
    assert dry.returncode == 1
    assert ("would stop (budget) before order 3 (o3), if every order before it takes job_seconds_limit"
            in dry.stdout)


def test_a_dry_run_over_max_shots_exits_as_the_live_run(cli: Cli) -> None:
    path = cli.manifest(orders=1)
    path.write_text(path.read_text().replace("wait_seconds = 20", "wait_seconds = 20\nmax_shots = 5"))
    dry = cli.run("send", str(path))
    live = cli.run("send", str(path), "--live")
    assert dry.returncode == live.returncode == 2  # the manifest itself is refused, before anything is sent
    assert "max_shots" in dry.stderr and cli.posts_per_order() == {}


def test_a_dry_run_with_a_lost_order_exits_2_as_the_refused_live_run(cli: Cli) -> None:
    cli.fake.script("submit", "drop_after_create")
    manifest = str(cli.manifest(orders=1))
    assert cli.run("send", manifest, "--live").returncode == 2
    dry = cli.run("send", manifest)
    live = cli.run("send", manifest, "--live")
    assert (dry.returncode, live.returncode) == (2, 2)
    assert "Blocks a live run" in dry.stdout


def test_a_dry_run_within_the_budget_exits_0(cli: Cli) -> None:
    assert cli.run("send", str(cli.manifest(orders=2, limit=60, budget=120))).returncode == 0
