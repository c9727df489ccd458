"""docs/qdevices/quick-start.md, run as written: its files and each of its qdevices commands, on the MQSS fake."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.e2e.qdevices.conftest import Cli

pytestmark = pytest.mark.slow
PAGE = Path(__file__).resolve().parents[3] / "docs" / "qdevices" / "quick-start.md"


def _block_after(text: str, label: str) -> str:
    found = re.search(re.escape(label) + r"\n\n```[a-z]*\n(.*?)```", text, re.S)
    assert found, label
    return found.group(1)


def _commands(text: str) -> list[list[str]]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith("qdevices "):
                lines.append(shlex.split(line.split("#", 1)[0])[1:])
    return lines


def test_the_quick_start_runs_as_written(cli: Cli) -> None:
    text = PAGE.read_text()
    (cli.tmp / "bell.qasm").write_text(_block_after(text, "`bell.qasm`:"))
    (cli.tmp / "run.toml").write_text(_block_after(text, "`run.toml`:"))
    commands = _commands(text)
    assert [c[0] for c in commands] == ["send", "check", "send", "send", "jobs", "budget"]
    record = ""
    for args in commands:
        args = [record if a == "PATH" else a for a in args]
        done = cli.run(*args)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        found = re.search(r"^Record: (\S+)", done.stdout, re.M)
        record = found.group(1) if found else record
        if args[:2] == ["send", "--live"]:
            assert record and f"Done: {record}" in done.stdout
    assert len(cli.fake.requests("submit")) == 1  # one order, sent once: the resume sent nothing again
