"""The qdevices CLI as a process, with a fake site (MQSS, VLQ or Piast-Q) on loopback and a private HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.fixtures import fake_mqss, fake_piastq, fake_vlq, site_token
from tests.fakes.mqss_server import FakeMqss
from tests.fakes.piastq_server import BELL_AQT, FakePiastq
from tests.fakes.piastq_server import DEVICE as PIASTQ_DEVICE
from tests.fakes.vlq_server import PROJECT, FakeVlq

DRIVER = Path(__file__).with_name("driver.py")
BELL = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[2];\nh q[0];\ncx q[0],q[1];\nmeasure q -> c;\n'


@dataclass
class Cli:
    tmp: Path
    fake: Any  # FakeMqss, FakeVlq or FakePiastq, as ``site`` says
    token: str
    env: dict[str, str] = field(default_factory=dict)
    site: str = "mqss"

    @property
    def token_variable(self) -> str:
        return {"mqss": "MQSS_TOKEN", "vlq": "LEXIS_TOKEN", "piastq": "PCSS_API_KEY"}[self.site]

    @property
    def home(self) -> Path:
        return self.tmp / "home"

    @property
    def records(self) -> Path:
        return self.home / ".local" / "share" / "qdevices" / "records"

    def manifest(self, orders: int = 2, wait: int = 20, limit: int = 60, budget: int = 100_000, name: str = "run",
                 extra: str = "", circuit: str = "") -> Path:
        """``circuit``: the orders' circuit file; by default bell.qasm, and for Piast-Q its AQT circuit as
        JSON (bell.aqt.json), which needs no conversion (an OpenQASM one imports qiskit: seconds a call)."""
        (self.tmp / "bell.qasm").write_text(BELL)
        (self.tmp / "bell.aqt.json").write_text(json.dumps(BELL_AQT))
        circuit = circuit or ("bell.aqt.json" if self.site == "piastq" else "bell.qasm")
        head = {"mqss": 'site = "mqss"\ndevice = "Q5"\n',
                "vlq": f'site = "vlq"\ndevice = "VLQ"\nproject = "{PROJECT}"\n',
                "piastq": f'site = "piastq"\ndevice = "{PIASTQ_DEVICE}"\n'}[self.site]
        text = (f'name = "{name}"\n{head}{extra}\n[limits]\njob_seconds_limit = {limit}\n'
                f"budget_seconds = {budget}\nwait_seconds = {wait}\n")
        for i in range(1, orders + 1):
            text += f'[[orders]]\nname = "o{i}"\ncircuit = "{circuit}"\nshots = {11 * i}\n'
        path = self.tmp / f"{name}.toml"
        path.write_text(text)
        return path

    def config(self, text: str) -> None:
        path = self.tmp / "cfg" / "qdevices" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def environ(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("QDEVICES_", "XDG_", "MQSS_", "LEXIS_", "PCSS_"))}
        env.update(HOME=str(self.home), XDG_CONFIG_HOME=str(self.tmp / "cfg"), QDEVICES_POLL_SECONDS="0.05",
                   PYTHONDONTWRITEBYTECODE="1")
        env[self.token_variable] = self.token
        env.update(self.env)
        env.update(extra)
        return env

    def argv(self, *args: str, spec: dict[str, Any] | None = None) -> list[str]:
        return [sys.executable, str(DRIVER), json.dumps({**self.addresses(), **(spec or {})}), *args]

    def addresses(self) -> dict[str, str]:
        """The fake's addresses, put in through the container by the driver (never a flag or variable)."""
        if isinstance(self.fake, FakeVlq):
            return {"vlq_userorg_url": self.fake.userorg_url + "/", "vlq_heappe_url": self.fake.heappe_url}
        if isinstance(self.fake, FakePiastq):
            return {"piastq_base_url": self.fake.base_url}
        return {"mqss_base_url": self.fake.base_url}

    def run(self, *args: str, spec: dict[str, Any] | None = None, timeout: float = 60, **env: str
            ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args, spec=spec), env=self.environ(**env), capture_output=True, text=True,
                              timeout=timeout, cwd=self.tmp)

    def start(self, *args: str, spec: dict[str, Any] | None = None, **popen: Any) -> subprocess.Popen[str]:
        popen.setdefault("stdout", subprocess.PIPE)
        popen.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self.argv(*args, spec=spec), env=self.environ(), text=True, cwd=self.tmp, **popen)

    def record_paths(self) -> list[Path]:
        return sorted(p for p in self.records.rglob("*.jsonl") if p.name != "older_decisions.jsonl")

    def only_record(self) -> Path:
        paths = self.record_paths()
        assert len(paths) == 1, paths
        return paths[0]

    def lines(self, record: Path) -> list[dict[str, Any]]:
        return [json.loads(x) for x in record.read_text().splitlines() if x.strip()]

    def posts_per_order(self) -> dict[int, int]:
        """Job-making requests per order, from the fake's journal (VLQ: CreateJob of metered jobs)."""
        counts: dict[int, int] = {}
        if isinstance(self.fake, FakeVlq):
            for entry in self.fake.requests("create"):
                spec = json.loads(entry.body)["JobSpecification"]
                if spec["Name"].startswith("o"):  # the order's name; the init job is backend_init_job
                    counts[int(spec["Name"][1:])] = counts.get(int(spec["Name"][1:]), 0) + 1
            return counts
        for entry in self.fake.requests("submit"):
            shots = json.loads(entry.body)["shots"]
            counts[shots // 11] = counts.get(shots // 11, 0) + 1
        return counts

    def submits_per_order(self) -> dict[int, int]:
        """VLQ: SubmitJob requests per order (by the job id CreateJob gave it)."""
        names = {job.id: int(job.name[1:]) for job in self.fake.jobs.values() if job.name.startswith("o")}
        counts: dict[int, int] = {}
        for entry in self.fake.requests("submit"):
            order = names.get(json.loads(entry.body)["CreatedJobInfoId"])
            if order is not None:
                counts[order] = counts.get(order, 0) + 1
        return counts

    def everything_written(self) -> str:
        """Every file the app wrote under HOME and the config folder, as text."""
        texts = []
        for root in (self.home, self.tmp / "cfg"):
            for p in root.rglob("*"):
                if p.is_file():
                    texts.append(p.read_text(errors="replace"))
        return "\n".join(texts)


@pytest.fixture
def cli(tmp_path: Path, fake_mqss: FakeMqss, site_token: str) -> Iterator[Cli]:
    (tmp_path / "home").mkdir()
    yield Cli(tmp_path, fake_mqss, site_token)


@pytest.fixture
def vlq_cli(tmp_path: Path, fake_vlq: FakeVlq, site_token: str) -> Iterator[Cli]:
    (tmp_path / "home").mkdir()
    yield Cli(tmp_path, fake_vlq, site_token, site="vlq")


@pytest.fixture
def piastq_cli(tmp_path: Path, fake_piastq: FakePiastq, site_token: str) -> Iterator[Cli]:
    (tmp_path / "home").mkdir()
    yield Cli(tmp_path, fake_piastq, site_token, site="piastq")


__all__ = ["Cli", "fake_mqss", "fake_piastq", "fake_vlq", "site_token"]
