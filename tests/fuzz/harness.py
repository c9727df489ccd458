"""Run the real console scripts in this process on a fresh copy of a seeded home, and check the promises.

Each example gets its own copy of a template (a home with pointers and a record root with three settled
jobs, made once by the real ``dunscaith submit``), so one example's damage never leaks into the next.
The checks are the ones issue 10 names: no traceback and no exit 3; no file written outside the record
root and dunscaith's own folders; and a refused call (exit 2) changes no record, pointer or residual entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the console scripts are imported inside run_in_process, after its environment is set
    from dunscaith.entrypoints.qdevices.root.container import Container

DUNSCAITH = str(Path(sys.executable).parent / "dunscaith")
JOBS = ("j1", "j2", "j3")
# How many examples each fuzz test runs: few in the quick suite (-m "not slow"), more in the whole one.
MODE = {"name": "quick"}


def examples(full: int, quick: int = 8) -> int:
    return quick if MODE["name"] == "quick" else full


@dataclass(frozen=True)
class Home:
    base: Path

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def config(self) -> Path:
        return self.home / ".config"

    @property
    def dunscaith_dir(self) -> Path:
        return self.config / "dunscaith"

    @property
    def cache_dir(self) -> Path:
        """dunscaith's own cache (the remembered settings): a command may write it, bad input included."""
        return self.home / ".cache" / "dunscaith"

    @property
    def qdevices_dir(self) -> Path:
        return self.config / "qdevices"

    @property
    def root(self) -> Path:
        return self.base / "records"

    @property
    def cwd(self) -> Path:
        return self.base / "cwd"

    def env(self) -> dict[str, str]:
        keep = {k: v for k, v in os.environ.items()
                if not k.startswith(("DUNSCAITH_", "QDEVICES_", "XDG_", "MQSS_", "LEXIS_", "PCSS_"))}
        keep.update(HOME=str(self.home), USER=os.environ.get("USER", "fuzz"),
                    DUNSCAITH_RECORDS__ROOT=str(self.root), DUNSCAITH_SUPERVISE__POLL="0.2",
                    DUNSCAITH_SUPERVISE__WAIT="1", DUNSCAITH_COMMANDS__WAIT="1")
        return keep


def make_template(base: Path) -> Home:
    """Three settled local jobs with their pointers, recorded by the real program."""
    t = Home(base)
    for d in (t.home, t.cwd):
        d.mkdir(parents=True)
    for job in JOBS:
        done = subprocess.run([DUNSCAITH, "submit", "--name", job, "--", "true"], env=t.env(), cwd=t.cwd,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    return t


def _repoint(home: Home, template: Home) -> None:
    """The copy's pointers name the copy's record root: a pointer into the template's root (on this same
    host) would be followed there by the job commands (docs/record-backing.md), out of the copy."""
    folder = home.dunscaith_dir / "jobs"
    for pointer in folder.iterdir() if folder.is_dir() else ():
        if pointer.is_file():
            text = pointer.read_text()
            pointer.write_text(text.replace(json.dumps(str(template.root)), json.dumps(str(home.root))))


@contextlib.contextmanager
def fresh_copy(template: Home) -> Iterator[Home]:
    base = Path(tempfile.mkdtemp(prefix="fuzz-"))
    try:
        shutil.copytree(template.base, base / "t", symlinks=True)
        home = Home(base / "t")
        _repoint(home, template)
        yield home
    finally:
        shutil.rmtree(base, ignore_errors=True)


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str


def run_in_process(prog: str, argv: list[str], home: Home, env: Mapping[str, str] | None = None,
                   container: Container | None = None) -> Ran:
    """One call of the console script's main, as a user's shell would make it (its exit code, its output)."""
    environment = dict(home.env() if env is None else env)
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        os.environ.clear()
        os.environ.update(environment)
        os.chdir(home.cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                if prog == "dunscaith":
                    from dunscaith.entrypoints.dunscaith import app

                    app.main(argv)
                else:
                    from dunscaith.entrypoints.qdevices import app as qapp

                    qapp.main(argv, container=container) if container is not None else qapp.main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
    return Ran(code, out.getvalue(), err.getvalue())


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (not following links) with a digest of its bytes; folders by name."""
    found: dict[str, str] = {}
    if not folder.exists():
        return found
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames:
            found[os.path.join(dirpath, name)] = "dir"
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                if os.path.islink(path):
                    found[path] = "link:" + os.readlink(path)
                elif not stat.S_ISREG(os.lstat(path).st_mode):  # a FIFO a case planted: opened, it would block
                    found[path] = f"special:{stat.S_IFMT(os.lstat(path).st_mode):o}"
                else:
                    with open(path, "rb") as f:
                        found[path] = hashlib.sha256(f.read()).hexdigest()
            except OSError as exc:
                found[path] = f"unreadable:{exc.errno}"
    return found


def records_of(root: Path) -> object:
    """The store's jobs and events as rows, read without writing; the bytes when SQLite cannot read it."""
    import sqlite3

    db = root / "records.db"
    if not db.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        conn.text_factory = bytes  # damaged text is compared as it is, not decoded
        try:
            return (conn.execute("SELECT * FROM jobs ORDER BY id").fetchall(),
                    conn.execute("SELECT * FROM events ORDER BY job_id, seq").fetchall())
        finally:
            conn.close()
    except (sqlite3.Error, UnicodeDecodeError):  # a name in the schema itself may be the damaged byte
        return hashlib.sha256(db.read_bytes()).hexdigest()


# Files a command may rewrite without changing a record: the store's own companions and locks.
VOLATILE = ("records.db-wal", "records.db-shm", "records.db", "write.lock", "schema.lock")


# Commands whose refusal is itself recorded: the request, then its answer.
REQUESTS = frozenset({"hold", "release", "cancel", "give-up", "abandon", "requeue", "resubmit"})


def check_promises(ran: Ran, home: Home, before_outside: dict[str, str], before_records: object,
                   before_own: dict[str, str], argv: list[str] | None = None) -> None:
    assert ran.code != 3, f"exit 3: {ran.stderr}"
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr, ran.stderr
    outside = {k: v for k, v in snapshot(home.base).items()
               if not k.startswith((str(home.root), str(home.dunscaith_dir), str(home.home / ".local"),
                                    str(home.cache_dir)))}
    assert outside == before_outside, f"files outside the record root changed: {set(outside) ^ set(before_outside)}"
    if ran.code == 2:
        after = records_of(home.root)
        if argv and argv[0] in REQUESTS and isinstance(after, tuple) and isinstance(before_records, tuple):
            # a request command records the request and its answer, refused included (docs/job-commands.md):
            # what was recorded before stays as it was, and only new events follow it
            assert after[0] == before_records[0], f"a refused request changed the jobs: {ran.stderr}"
            assert set(before_records[1]) <= set(after[1]), f"a refused request changed a record: {ran.stderr}"
        else:
            assert after == before_records, f"a refused call changed a record: {ran.stderr}"
        own = {k: v for k, v in snapshot(home.dunscaith_dir).items() if not k.endswith(".lock")}
        assert own == before_own, f"a refused call changed a pointer or residual entry: {ran.stderr}"


def before(home: Home) -> tuple[dict[str, str], object, dict[str, str]]:
    outside = {k: v for k, v in snapshot(home.base).items()
               if not k.startswith((str(home.root), str(home.dunscaith_dir), str(home.home / ".local"),
                                    str(home.cache_dir)))}
    own = {k: v for k, v in snapshot(home.dunscaith_dir).items() if not k.endswith(".lock")}
    return outside, records_of(home.root), own
