"""Issue 10: hypothesis over qdevices' configuration, variables, manifests and records. No site is asked
(dry runs and ``jobs`` only); whatever the input: no traceback, no exit 3, nothing written outside its
own folders, and a refused call changes no record."""

from __future__ import annotations

import os
from collections.abc import Callable

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import Home, Ran, examples, fresh_copy, run_in_process, snapshot

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                       HealthCheck.data_too_large])
BELL = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\ncreg c[2];\nh q[0];\nmeasure q -> c;\n'
MANIFEST = ('name = "run"\nsite = "mqss"\ndevice = "Q5"\n[limits]\njob_seconds_limit = 60\nbudget_seconds = 1000\n'
            'wait_seconds = 5\n[[orders]]\nname = "o1"\ncircuit = "bell.qasm"\nshots = 10\n')


def _qdevices(template: Home, argv: list[str], prepare=None, env_extra=None) -> Ran:  # type: ignore[no-untyped-def]
    with fresh_copy(template) as home:
        (home.cwd / "bell.qasm").write_text(BELL)
        (home.cwd / "run.toml").write_text(MANIFEST)
        if prepare is not None:
            prepare(home)
        env = home.env()
        env.update(env_extra or {})
        watched = {k: v for k, v in snapshot(home.base).items() if not k.startswith(str(home.home / ".local"))
                   and not k.startswith(str(home.qdevices_dir))}
        records = _records(home)
        ran = run_in_process("qdevices", argv, home, env)
        assert ran.code != 3, f"exit 3: {ran.stderr}"
        assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr, ran.stderr
        after = {k: v for k, v in snapshot(home.base).items() if not k.startswith(str(home.home / ".local"))
                 and not k.startswith(str(home.qdevices_dir))}
        assert after == watched, f"files outside qdevices' own changed: {set(after) ^ set(watched)}"
        if ran.code == 2:
            assert _records(home) == records, f"a refused call changed a record: {ran.stderr}"
        return ran


def _records(home: Home) -> dict[str, str]:
    """What a refused call must leave as it was under ~/.local: all but the site locks' folder and lock files,
    which send --live takes before it reads any record (docs/qdevices/live-runs.md), then releases."""
    state = str(home.home / ".local" / "state")
    return {k: v for k, v in snapshot(home.home / ".local").items()
            if not (k in (state, state + "/qdevices") or (k.startswith(state + "/") and k.endswith(".lock")))}


CONFIG_VALUES = st.one_of(st.sampled_from(["0", "-1", "1e300", "inf", "nan", "true", '""', '"~/r"', '"rel"', "[]",
                                           '["rel"]', '["~/x"]', "{}", "1", '"/tmp/q"']),
                          st.text(max_size=8).map(lambda s: '"' + s.replace("\\", "").replace('"', "") + '"'))
CONFIG_KEYS = ["records", "poll_seconds", "poll_second", "mqss", "vlq", "piastq", "older_records", "record"]


@st.composite
def config_text(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.text(max_size=60))
    lines = []
    for _ in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            lines.append(f"[{draw(st.sampled_from(CONFIG_KEYS))}]")
        lines.append(f"{draw(st.sampled_from(CONFIG_KEYS))} = {draw(CONFIG_VALUES)}")
    return "\n".join(lines) + "\n"


@settings(FUZZ, max_examples=examples(50))
@given(text=config_text(), argv=st.sampled_from([["check"], ["send", "run.toml"]]))
def test_fuzz_qdevices_config_files(template: Home, text: str, argv: list[str]) -> None:
    def prepare(home: Home) -> None:
        home.qdevices_dir.mkdir(parents=True, exist_ok=True)
        (home.qdevices_dir / "config.toml").write_text(text, errors="surrogateescape")

    _qdevices(template, argv, prepare)


ENV = st.dictionaries(
    st.one_of(st.sampled_from(["QDEVICES_RECORDS", "QDEVICES_POLL_SECONDS", "QDEVICES_POLL_SECOND",
                               "QDEVICES_MQSS__OLDER_RECORDS", "QDEVICES_MQSS", "QDEVICES_VLQ__OLDER_RECORDS"]),
              st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ_", min_size=1, max_size=8).map(lambda s: "QDEVICES_" + s)),
    st.one_of(st.sampled_from(["", "0", "true", "nan", "inf", "notjson", "[]", '["rel"]', "relative", "~/r",
                               "$NOPE", "/dev/null", "/etc/passwd"]),
              st.text(max_size=8).filter(lambda s: "\x00" not in s)),
    min_size=1, max_size=3)


@settings(FUZZ, max_examples=examples(50))
@example(variables={"QDEVICES_POLL_SECOND": "3"}, argv=["send", "run.toml"])
@example(variables={"QDEVICES_RECORDS": "/etc/passwd"}, argv=["send", "run.toml"])
@example(variables={"QDEVICES_RECORDS": "/etc/passwd"}, argv=["budget", "mqss"])  # issue 38: exit 3 before
@given(variables=ENV, argv=st.sampled_from([["check"], ["send", "run.toml"], ["budget", "mqss"]]))
def test_fuzz_qdevices_environment_variables(template: Home, variables: dict[str, str], argv: list[str]) -> None:
    _qdevices(template, argv, env_extra=variables)


MANIFEST_LINES = st.sampled_from([
    'name = "run"', 'name = ""', 'name = "../x"', 'site = "mqss"', 'site = "nowhere"', 'device = "Q5"',
    "[limits]", "job_seconds_limit = 60", "job_seconds_limit = 1e300", "job_seconds_limit = true",
    "budget_seconds = inf", "budget_seconds = -1", "wait_seconds = 0", "[[orders]]", 'name = "o1"',
    'circuit = "bell.qasm"', 'circuit = "/etc/passwd"', 'circuit = "missing.qasm"', 'circuit = "/dev/zero"',
    'circuit = "fifo.qasm"', "shots = 10", "shots = 0",
    "shots = 1e3", "shots = true", 'rules = "nope.py"', "colour = 1"])


@settings(FUZZ, max_examples=examples(60))
@given(lines=st.lists(MANIFEST_LINES, max_size=14), raw=st.one_of(st.none(), st.binary(max_size=100)))
def test_fuzz_qdevices_manifests(template: Home, lines: list[str], raw: bytes | None) -> None:
    def prepare(home: Home) -> None:
        (home.cwd / "m.toml").write_bytes(raw if raw is not None else "\n".join(lines).encode())
        os.mkfifo(home.cwd / "fifo.qasm")  # no writer: a read of it would wait for ever (issue 38)

    _qdevices(template, ["send", "m.toml"], prepare)


RECORD = st.one_of(
    st.binary(max_size=300),
    st.lists(st.sampled_from([
        b'{"type":"start","at":"2026-01-01T00:00:00+00:00"}', b'{"type":"submitting","order":1}', b"{}", b"[]",
        b"[" * 100_000, b'{"type":"start"}', b"garbage", b'{"type":"result","order":1,"seconds":1e400}']),
        max_size=5).map(lambda parts: b"\n".join(parts) + b"\n"))


@settings(FUZZ, max_examples=examples(60))
@given(content=RECORD, directory=st.booleans(), link=st.booleans())
def test_fuzz_qdevices_records(template: Home, content: bytes, directory: bool, link: bool) -> None:
    def prepare(home: Home) -> None:
        target = home.cwd / "r.jsonl"
        if directory:
            target.mkdir()
        else:
            target.write_bytes(content)
            os.chmod(target, 0o600)
        if link:
            (home.cwd / "link.jsonl").symlink_to(target)

    _qdevices(template, ["jobs", "link.jsonl" if link else "r.jsonl"], prepare)


HOSTS = st.one_of(st.sampled_from(["../../x", "..", "a/b", "", " ", "a..b", "-a", "a" * 300, "login\n2", "x;rm"]),
                  st.text(max_size=20))


@settings(FUZZ, max_examples=examples(40))
@example(host="../../x")
@given(host=HOSTS)
def test_fuzz_qdevices_unlock_host(template: Home, host: str) -> None:
    """Issue 22 item 15: a --host that is not a host name is one line and exit 2, and clears nothing."""
    ran = _qdevices(template, ["unlock", "mqss", "--host", host])
    if any(c in host for c in "/ \n;") or ".." in host or host in ("", "-a") or len(host) > 253:
        assert ran.code == 2 and len(ran.stderr.strip().splitlines()) == 1, ran.stderr


# Issue 38: each is bad input, one line and exit 2 (docs/qdevices/live-runs.md), nothing recorded and nothing
# written outside qdevices' own folders (_qdevices' checks): a records folder that is a file or open to
# others, a circuit or manifest that is no regular file (read for ever before), a home that does not exist.
def _zero_manifest(home: Home) -> None:
    (home.cwd / "zero.toml").write_text(MANIFEST.replace('"bell.qasm"', '"/dev/zero"'))
    os.mkfifo(home.cwd / "fifo.qasm")
    (home.cwd / "fifo.toml").write_text(MANIFEST.replace('"bell.qasm"', '"fifo.qasm"'))
    (home.cwd / "open").mkdir()
    os.chmod(home.cwd / "open", 0o777)


OPEN = "OPEN"  # the copy's cwd/open (0777), given as QDEVICES_RECORDS
GONE = "GONE"  # the copy's base/nonexistent/home, given as HOME
TOKEN = {"MQSS_TOKEN": "t" * 32}
QDEVICES_38 = [
    ({"QDEVICES_RECORDS": "/etc/passwd"}, ["budget", "mqss"]),
    ({"QDEVICES_RECORDS": "/etc/passwd"}, ["budget", "mqss", "--json"]),
    ({}, ["send", "zero.toml"]), ({**TOKEN}, ["send", "zero.toml", "--live"]), ({}, ["send", "fifo.toml"]),
    ({}, ["send", "/dev/zero"]), ({}, ["budget", "mqss", "--manifest", "/dev/zero"]),
    ({}, ["check", "--manifest", "zero.toml"]),
    ({"QDEVICES_RECORDS": OPEN}, ["budget", "mqss"]), ({"QDEVICES_RECORDS": OPEN}, ["send", "run.toml"]),
    ({"QDEVICES_RECORDS": OPEN, **TOKEN}, ["send", "run.toml", "--live"]),
    ({"HOME": GONE}, ["budget", "mqss"]), ({"HOME": GONE}, ["send", "run.toml"]), ({"HOME": GONE}, ["check"]),
    ({"HOME": GONE, **TOKEN}, ["send", "run.toml", "--live"]),
]


def _each_case(test: Callable[..., None]) -> Callable[..., None]:
    """Every case of the issue is an example of its own: always run, before what hypothesis draws."""
    for variables, argv in reversed(QDEVICES_38):
        test = example(variables=variables, argv=argv)(test)
    return test


@settings(FUZZ, max_examples=examples(len(QDEVICES_38), quick=len(QDEVICES_38)))
@_each_case
@given(variables=st.sampled_from([v for v, _ in QDEVICES_38]), argv=st.sampled_from([a for _, a in QDEVICES_38]))
def test_fuzz_qdevices_issue_38_refusals(template: Home, variables: dict[str, str], argv: list[str]) -> None:
    """A pair hypothesis makes of them may run (a dry run with an open folder it only reads, say): the
    promises hold for it too; the issue's own pairs are bad input, each."""
    ran = _qdevices_with(template, argv, _zero_manifest, dict(variables))
    if (variables, argv) in QDEVICES_38:
        assert ran.code == 2 and len(ran.stderr.strip().splitlines()) == 1, (variables, argv, ran)


def _qdevices_with(template: Home, argv: list[str], prepare, extra: dict[str, str]) -> Ran:  # type: ignore[no-untyped-def]
    """_qdevices, with OPEN and GONE made into the copy's paths once it exists."""
    def resolved(home: Home) -> None:
        prepare(home)
        for name, value in list(extra.items()):
            extra[name] = {OPEN: str(home.cwd / "open"),
                           GONE: str(home.base / "nonexistent" / "home")}.get(value, value)

    return _qdevices(template, argv, resolved, extra)
