"""SystemHost against this machine: the ids and mounts other tools report."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from dunscaith.adapters.host.system import MACHINE_ID_FILES, SystemHost


def test_the_identity_is_this_machines_id_and_hostname() -> None:
    identity = SystemHost().identity()
    assert identity.hostname == socket.gethostname()
    present = [p.read_text().strip() for p in MACHINE_ID_FILES if p.is_file()]
    if not present:
        pytest.skip("this machine has no machine-id file")
    assert identity.machine_id == present[0]


@pytest.mark.parametrize("path", ["/", "/proc", "/dev/shm", "TMP", "TMP/not/made/yet"])
def test_the_filesystem_type_agrees_with_findmnt(path: str, tmp_path: Path) -> None:
    if shutil.which("findmnt") is None:
        pytest.skip("findmnt (util-linux) is not installed")
    target = Path(path.replace("TMP", str(tmp_path)))
    existing = target
    while not existing.exists():
        existing = existing.parent
    expected = subprocess.run(["findmnt", "-n", "-o", "FSTYPE", "--target", str(existing)],
                              capture_output=True, text=True, check=True).stdout.split()[-1]
    found = SystemHost().filesystem(target)
    assert found.name == expected
    assert not found.is_network  # this test machine keeps everything local
