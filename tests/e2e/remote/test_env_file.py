"""`dunscaith remote run --env-file`: the worker's secrets reach it without ever being on a command line."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from tests.e2e.remote.conftest import GATED, Remote, read_json, wait_for

pytestmark = pytest.mark.slow


def _private(path: Path, data: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(data)
    path.chmod(mode)
    return path


def _every_command_line() -> list[bytes]:
    lines = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes())
            except OSError:  # gone, or not ours to read
                pass
    return lines


def test_values_from_the_file_reach_the_worker_and_no_command_line_shows_them(remote: Remote, tmp_path: Path) -> None:
    secret = f"s3cret-{secrets.token_hex(16)}"
    gate = tmp_path / "gate"
    gate.mkdir()
    env_file = _private(tmp_path / "env", f"API_TOKEN={secret}\0".encode())
    d = tmp_path / "inst"
    proc = remote.run(d, "sh", "-c", f'printf "%s\\n" "$API_TOKEN"; {GATED}', cwd=gate,
                      extra=("--env-file", str(env_file)))
    assert proc.stdout is not None
    assert proc.stdout.readline() == f"{secret}\n".encode()  # the worker has it
    worker = int(wait_for(lambda: (gate / "pid").exists() and (gate / "pid").read_text().strip(), "the worker"))
    # While both run: neither the wrapper's, the worker's, nor any other command line holds the value.
    wrapper_line = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
    assert b"--env-file" in wrapper_line and secret.encode() not in wrapper_line
    assert secret.encode() not in Path(f"/proc/{worker}/cmdline").read_bytes()
    assert not [line for line in _every_command_line() if secret.encode() in line]
    (gate / "go").touch()
    proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert read_json(d / "launching.json")["env_names"] == ["API_TOKEN", "PATH"]
    assert not [p.name for p in d.iterdir() if p.is_file() and secret.encode() in p.read_bytes()]
    assert env_file.read_bytes() == f"API_TOKEN={secret}\0".encode()  # read, and left where it was


def test_both_formats_keep_values_byte_for_byte_with_newlines_and_equals_signs(remote: Remote, tmp_path: Path) -> None:
    value = "line one\nline two = x"
    nul = _private(tmp_path / "env0", f"MULTI={value}\0EMPTY=\0".encode())
    as_json = _private(tmp_path / "env.json", json.dumps({"MULTI": value, "EMPTY": ""}).encode())
    for name, env_file in (("a", nul), ("b", as_json)):
        proc = remote.run(tmp_path / name, "sh", "-c", 'printf "%s|%s|" "$MULTI" "${EMPTY-unset}"',
                          extra=("--env-file", str(env_file), "--env", "OTHER=1"))
        out, _ = proc.communicate(timeout=30)
        assert (proc.returncode, out) == (0, f"{value}||".encode())
        assert read_json(tmp_path / name / "launching.json")["env_names"] == ["EMPTY", "MULTI", "OTHER", "PATH"]


@pytest.mark.parametrize(
    ("content", "mode", "message"),
    [
        (b"TOKEN=hunter2-value\0", 0o644, "mode 0644 lets others read or change it"),
        (b"TOKEN=hunter2-value\0", 0o620, "mode 0620 lets others read or change it"),
        (b"TOKEN=hunter2-value\nOTHER=1\n", 0o600, "each ended by a NUL byte"),
        (b"hunter2-value\0", 0o600, "entry 1 is not NAME=VALUE"),
        (b"A=1\0=hunter2-value\0", 0o600, "entry 2 is not NAME=VALUE"),
        (b"TOKEN=hunter2-value\0TOKEN=hunter2-value\0", 0o600, "TOKEN is given twice"),
        (b'{"TOKEN": ["hunter2-value"]}', 0o600, "the value of 'TOKEN' is not a string"),
        (b'{"TOKEN": "hunter2-value"', 0o600, "not JSON"),
        (b'{"A=B": "hunter2-value"}', 0o600, "is not a variable name"),
        (b"TOKEN=hunter2-value\xff\0", 0o600, "not UTF-8"),
        (b"PATH=hunter2-value\0", 0o600, "PATH is given both by --env and by --env-file"),
    ],
)
def test_a_bad_env_file_gets_one_line_without_its_values_and_nothing_starts(
        remote: Remote, tmp_path: Path, content: bytes, mode: int, message: str) -> None:
    env_file = _private(tmp_path / "env", content, mode)
    done = remote.cli("run", "--instance-dir", str(tmp_path / "inst"), "--env", "PATH=/bin",
                      "--env-file", str(env_file), "--", "true")
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "hunter2" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "inst" / "launching.json").exists()


def test_a_symlink_a_missing_file_and_a_directory_are_refused(remote: Remote, tmp_path: Path) -> None:
    real = _private(tmp_path / "real", b"A=1\0")
    (tmp_path / "link").symlink_to(real)
    for given, message in ((tmp_path / "link", "is a symbolic link"), (tmp_path / "nothing", "no such file"),
                           (tmp_path, "not a regular file")):
        done = remote.cli("run", "--instance-dir", str(tmp_path / "inst"), "--env-file", str(given), "--", "true")
        assert done.returncode == 2 and message in done.stderr, (given, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "inst").exists() or not (tmp_path / "inst" / "launching.json").exists()
    assert os.path.exists(real)
