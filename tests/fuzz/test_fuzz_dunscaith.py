"""Issue 10: hypothesis over dunscaith's arguments, configuration, variables, pointers, residual files and
records. Whatever the input: no traceback, no exit 3, nothing written outside the record root and
dunscaith's own folders, and a refused call changes no record."""

from __future__ import annotations

import atexit
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fuzz.harness import JOBS, Home, before, check_promises, examples, fresh_copy, run_in_process

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                       HealthCheck.data_too_large])

COMMANDS = ["status", "list", "prune", "hold", "release", "requeue", "resubmit", "give-up", "cancel", "abandon",
            "reconcile", "doctor", "stop", "submit", "supervise", "check"]
WORDS = [*COMMANDS, *JOBS, "--json", "--all", "--older-than", "--emergency", "--name", "--cluster", "--help",
         "-h", "999999999w", "1e300d", "0s", "-1d", "1w", "nan", "local", "nope", "", " ", "\x00", "é", "../x",
         "--to", "--reason", "--force", "-", "--older-than=999999999w", "10000000000000000000000d",
         # issue 22 items 12, 13
         "--state", "--limit", "bogus", "faild", "sumbit", "stauts", "seed\nx", "\x1b[31m", "a" * 10_000]
ARG = st.one_of(st.sampled_from(WORDS), st.text(max_size=12).filter(lambda s: "\x00" not in s))
# "--" would end the options and run a command: a job actually started is not bad input.
ARGV = st.lists(ARG, min_size=1, max_size=6).filter(lambda a: "--" not in a and a[0] != "remote")
READ_COMMANDS = [["list"], ["list", "--json"], ["status", "j1"], ["status", "j2", "--json"], ["prune", "j1"],
                 ["doctor"], ["status"]]


def _call(template: Home, argv: list[str], prepare=None, env_extra=None):  # type: ignore[no-untyped-def]
    with fresh_copy(template) as home:
        if prepare is not None:
            prepare(home)
        env = home.env()
        env.update(env_extra or {})
        snapshot = before(home)
        ran = run_in_process("dunscaith", argv, home, env)
        check_promises(ran, home, *snapshot, argv=argv)
        _plain(ran)
        return ran


def _plain(ran) -> None:  # type: ignore[no-untyped-def]
    """Issue 22 item 13: no library wording, no exception class names, no value echoed whole when long."""
    for words in ("Input should", "[Errno", "Error: ", "unable to parse"):
        assert words not in ran.stderr, ran.stderr
    assert all(len(line) < 2000 for line in ran.stderr.splitlines()), ran.stderr[:300]


# The issue's cases are the first examples of each test (issue 10's corpus), before what hypothesis draws.
@settings(FUZZ, max_examples=examples(120))
@example(argv=["prune", "--older-than", "999999999w"])
@example(argv=["list", "--state", "bogus"])
@example(argv=["list", "--cluster", "nosuch"])
@example(argv=["status", "seed\nx"])
@example(argv=["hold", "\x1b[31mred"])
@example(argv=["sumbit"])
@example(argv=["list", "--limit", "x"])
@example(argv=["submit", "--name", "a" * 10_000, "true"])
@example(argv=["status", "j1", "--json"])
@example(argv=["submit", "--", ""])  # issue 22 item 9: recorded and run, execve's traceback on stderr
@example(argv=["submit", "--name", "j9", "--", "", "x"])
@example(argv=["remote", "run", "--", ""])
@example(argv=["check", "nope", "--json"])  # issue 22 item 7: an unknown cluster, one line and exit 2
@example(argv=["check", "../x"])
@given(argv=ARGV)
def test_fuzz_cli_arguments(template: Home, argv: list[str]) -> None:
    _call(template, argv)


def _refused_need(flag: str, value: str) -> bool:
    from dunscaith.domain.model.jobs import resources as r
    from dunscaith.domain.model.jobs.errors import BadSpec

    parse = {"-c": r.parse_count, "--mem": r.parse_memory, "-t": r.parse_time_limit, "--gpus": r.parse_gpus}
    try:
        parse.get(flag, r.parse_text)(value, flag)
    except BadSpec:
        return True
    return False


NEED_FLAGS = ["-c", "--cpus-per-task", "--mem", "-t", "--time", "--gpus", "-p", "-A", "--qos", "--export"]
_SHORT = {"--cpus-per-task": "-c", "--time": "-t"}


# Issue 22 item 1: a need no scheduler could honour is refused before anything is recorded or sent.
@settings(FUZZ, max_examples=examples(60))
@example(flag="-c", value="0")
@example(flag="-c", value="abc")
@example(flag="--mem", value="10PB")
@example(flag="-t", value="abc")
@example(flag="--gpus", value="0")
@example(flag="-p", value="")
@given(flag=st.sampled_from(NEED_FLAGS),
       value=st.one_of(st.sampled_from(["0", "-1", "abc", "", " ", "1e3", "10PB", "0:00", "a b", "$(x)", "1-",
                                        "99999999999999999"]),
                       st.text(max_size=12).filter(lambda s: "\x00" not in s)))
def test_fuzz_submit_needs(template: Home, flag: str, value: str) -> None:
    if not _refused_need(_SHORT.get(flag, flag), value):
        return  # a value some scheduler honours: a job would run, which is not bad input
    ran = _call(template, ["submit", "--name", "needs", flag, value, "--", "true"])
    assert ran.code == 2, (flag, value, ran)


def _refused_recovery(flag: str, value: str) -> bool:
    from dunscaith.domain.model.jobs.recovery_settings import NO_RECOVERY
    from dunscaith.entrypoints.cli_support import BadInput
    from dunscaith.entrypoints.dunscaith import recovery_rules

    args: dict[str, str | None] = {"--signal-before": None, "--requeue-on-time-limit": None,
                                   "--on-out-of-memory": None, "--on-time-limit": None, flag: value}
    try:
        recovery_rules.of_flags(NO_RECOVERY, *args.values())
    except BadInput:
        return True
    return False


RECOVERY_VALUES = st.one_of(
    st.sampled_from(["USR1@10", "usr1@0", "KILL@5", "USR1", "@", "0", "-1", "1001", "no", "max_memory=8G",
                     "max_memory=1x", "memory_factor=nan,max_memory=8G", "memory_factor=1e308,max_memory=8G",
                     "max_time=1:00,attempts=0", "time_factor=inf,max_time=1:00", "max_time=soon", "a=b,c", "",
                     ",", "max_memory=8G,max_memory=9G"]),
    st.text(max_size=16).filter(lambda s: "\x00" not in s))


# Issue 39: every value of the new flags is a job, or one line and exit 2; resubmit's needs likewise.
@settings(FUZZ, max_examples=examples(60))
@example(flag="--signal-before", value="KILL@5")
@example(flag="--on-out-of-memory", value="memory_factor=nan,max_memory=8G")
@example(flag="--on-time-limit", value="max_time=soon")
@example(flag="--requeue-on-time-limit", value="-1")
@given(flag=st.sampled_from(["--signal-before", "--requeue-on-time-limit", "--on-out-of-memory", "--on-time-limit"]),
       value=RECOVERY_VALUES)
def test_fuzz_issue_39_recovery_flags(template: Home, flag: str, value: str) -> None:
    if not _refused_recovery(flag, value) and flag != "--signal-before":
        return  # a value a job runs with: not bad input
    ran = _call(template, ["submit", "--name", "rec", flag, value, "--", "true"])
    assert ran.code == 2, (flag, value, ran)  # a signal needs --time: refused even when it reads


@settings(FUZZ, max_examples=examples(40))
@example(flag="--memory", value="1x")
@example(flag="--gpus", value="a100:0")
@given(flag=st.sampled_from(["--cpus", "--memory", "--time", "--gpus", "--queue", "--account"]),
       value=st.one_of(st.sampled_from(["0", "-1", "abc", "", "8G", "1:00", "a100:2", "$(x)"]),
                       st.text(max_size=12).filter(lambda s: "\x00" not in s)))
def test_fuzz_issue_39_resubmit_needs(template: Home, flag: str, value: str) -> None:
    ran = _call(template, ["resubmit", "nosuch", flag, value])
    assert ran.code == 2, (flag, value, ran)  # a bad value, or no such job: either way nothing is asked


TOML_KEYS = ["records", "record", "supervise", "supervize", "recovery", "escalations", "residual", "commands",
             "clusters", "root", "poll", "poll_max", "giveup", "drain", "wait", "absence", "attempts", "command",
             "timeout", "policy", "adapter", "bin_dir", "env", "local", "big", "recods", "notify", "on",
             # issue 39: the opt-in recovery's keys
             "on_out_of_memory", "on_time_limit", "requeue_on_time_limit", "memory_factor", "max_memory",
             "time_factor", "max_time"]
TOML_VALUES = st.one_of(
    st.sampled_from(["0", "-1", "1e300", "inf", "nan", "true", "false", '""', '"~/x"', '"relative"', '"/tmp/x"',
                     '"slurm"', '"local"', "[]", '["/bin/true"]', "{}", '{ SLURM_CONF = "/x" }', "1", "0.2"]),
    st.integers(min_value=-10**30, max_value=10**30).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(max_size=8).map(lambda s: '"' + s.replace("\\", "").replace('"', "") + '"'),
)


@st.composite
def config_text(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        return draw(st.text(max_size=80))  # anything at all, mostly not TOML
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            lines.append(f"[{draw(st.sampled_from(TOML_KEYS))}" + (f".{draw(st.sampled_from(TOML_KEYS))}]"
                                                                  if draw(st.booleans()) else "]"))
        lines.append(f"{draw(st.sampled_from(TOML_KEYS))} = {draw(TOML_VALUES)}")
    return "\n".join(lines) + "\n"


@settings(FUZZ, max_examples=examples(80))
@example(text='[record]\nroot = "/var/tmp/x"\n', argv=["list"], as_directory=False)
@example(text="[supervize]\npoll = 1\n", argv=["list"], as_directory=False)
@example(text="recods = 1\n", argv=["list"], as_directory=False)
@example(text="[supervise]\npoll = true\n", argv=["list"], as_directory=False)
@example(text="[supervise]\npoll = inf\n", argv=["list"], as_directory=False)
@example(text="[supervise]\npoll = 1e300\n", argv=["list"], as_directory=False)
@example(text='[records]\nroot = ""\n', argv=["list"], as_directory=False)
@example(text='[records]\nroot = "relative/root"\n', argv=["list"], as_directory=False)
@example(text='[clusters.local]\nadapter = "slurm"\n', argv=["list"], as_directory=False)
@example(text='[clusters."../../escaped"]\nadapter = "slurm"\n', argv=["list"], as_directory=False)  # issue 22 item 5
@example(text=f'[records]\nroot = "/var/tmp/{"n" * 256}/r"\n', argv=["list"], as_directory=False)  # issue 22 item 8
@example(text="", argv=["list"], as_directory=True)
@example(text="[supervise]\npoll = 100\npoll_max = 5\n", argv=["list"], as_directory=False)
@example(text='[escalations]\ncommand = ["./notify"]\n', argv=["list"], as_directory=False)
@example(text='[notify]\ncommand = ["./notify"]\n', argv=["list"], as_directory=False)
@example(text='[notify]\non = ["outcome", "done"]\n', argv=["list"], as_directory=False)
@example(text='[notify]\ntimeout = 0\n', argv=["list"], as_directory=False)
@example(text='[records]\nroot = "/var/tmp/a\\nb"\n', argv=["list"], as_directory=False)
@example(text='[records]\nbackend = "sqlit"\n', argv=["status", "j1"], as_directory=False)
@given(text=config_text(), argv=st.sampled_from(READ_COMMANDS), as_directory=st.booleans())
def test_fuzz_config_files(template: Home, text: str, argv: list[str], as_directory: bool) -> None:
    def prepare(home: Home) -> None:
        path = home.dunscaith_dir / "config.toml"
        if as_directory and not text.strip():
            path.mkdir()
        else:
            path.write_text(text, errors="surrogateescape")

    _call(template, argv, prepare)


ENV_NAMES = st.one_of(
    st.sampled_from(["DUNSCAITH_RECORDS__ROOT", "DUNSCAITH_SUPERVISE__POLL", "DUNSCAITH_CLUSTERS",
                     "DUNSCAITH_CLUSTERS__BIG__ADAPTER", "DUNSCAITH_CLUSTERS__LOCAL__ADAPTER", "DUNSCAITH_RECORDS",
                     "DUNSCAITH_SUPERVISE", "DUNSCAITH_RECOVERY__ATTEMPTS", "DUNSCAITH_ESCALATIONS__COMMAND",
                     "DUNSCAITH_RESIDUAL__POLICY", "DUNSCAITH_COMMANDS__WAIT", "DUNSCAITH_RECORDS__ROT",
                     "DUNSCAITH_NOTIFY__COMMAND", "DUNSCAITH_NOTIFY__ON", "DUNSCAITH_NOTIFY__TIMEOUT",
                     "DUNSCAITH_NOTIFY",
                     "XDG_CONFIG_HOME", "HOME"]),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ_", min_size=1, max_size=10).map(lambda s: "DUNSCAITH_" + s),
)
ENV_VALUES = st.one_of(st.sampled_from(["", "0", "true", "nan", "inf", "1e300", "notjson", "{}", "[]", '{"x": 1}',
                                        "relative", "~/r", "/tmp", "$NOPE/x", "slurm", "-5"]),
                       st.text(max_size=10).filter(lambda s: "\x00" not in s))


@settings(FUZZ, max_examples=examples(80))
@example(variables={"DUNSCAITH_RECORDS__ROOT": ""}, argv=["list"])
@example(variables={"DUNSCAITH_CLUSTERS": "notjson"}, argv=["list"])
@example(variables={"DUNSCAITH_RECORDS__ROOT": "relative/root"}, argv=["list"])
@example(variables={"DUNSCAITH_SUPERVISE__POLL": "100", "DUNSCAITH_SUPERVISE__POLL_MAX": "5"}, argv=["list"])
@example(variables={"DUNSCAITH_RECORDS__ROOT": "/var/tmp/x\ny"}, argv=["list"])
@example(variables={"DUNSCAITH_ESCALATIONS__COMMAND": '["./notify"]'}, argv=["status", "j1"])
@example(variables={"DUNSCAITH_SUPERVISE__POLL": "abc"}, argv=["list"])
@example(variables={"DUNSCAITH_NOTIFY__ON": '["later"]'}, argv=["status", "j1"])
@example(variables={"DUNSCAITH_NOTIFY__TIMEOUT": "1e300"}, argv=["list"])
@example(variables={"DUNSCAITH_RECORDS__ROOT": f"/var/tmp/{'n' * 256}"}, argv=["status", "j1"])  # issue 22 item 8
@example(variables={"DUNSCAITH_RECORDS__ROOT": "/var/tmp/" + "d/" * 2100}, argv=["list"])
@given(variables=st.dictionaries(ENV_NAMES, ENV_VALUES, min_size=1, max_size=3),
       argv=st.sampled_from(READ_COMMANDS))
def test_fuzz_environment_variables(template: Home, variables: dict[str, str], argv: list[str]) -> None:
    def prepare(home: Home) -> None:
        pass

    if variables.get("HOME", "/").startswith("/") is False:
        variables.pop("HOME")
    if "HOME" in variables:
        variables.pop("HOME")  # another home is another user's files: the copy's home stays the one watched
    _call(template, argv, prepare, variables)


CONTENT = st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode),
                    st.sampled_from([b"", b"garbage\n", b"{}", b"[]", b"x" * 200_000, b"[" * 100_000,
                                     b'{"version": 1}']))


@settings(FUZZ, max_examples=examples(60))
@example(job="j1", content=b"garbage\n", directory=False, argv=["list"])
@example(job="j1", content=bytes(range(256)), directory=False, argv=["status", "j1"])
@example(job="j1", content=b"x" * 200_000, directory=False, argv=["list"])
@example(job="j1", content=b"", directory=True, argv=["status", "j1"])
@given(job=st.sampled_from([*JOBS, "j9", ".hidden", "x y"]), content=CONTENT, directory=st.booleans(),
       argv=st.sampled_from(READ_COMMANDS))
def test_fuzz_pointers(template: Home, job: str, content: bytes, directory: bool, argv: list[str]) -> None:
    def prepare(home: Home) -> None:
        path = home.dunscaith_dir / "jobs" / job
        if path.exists():
            path.unlink()
        if directory:
            path.mkdir()
        else:
            path.write_bytes(content)
            os.chmod(path, 0o600)

    _call(template, argv, prepare)


@settings(FUZZ, max_examples=examples(40))
@given(job=st.sampled_from([*JOBS, "j9"]), key=st.sampled_from(["k1", "entry", "x.json"]), content=CONTENT,
       directory=st.booleans(), argv=st.sampled_from(READ_COMMANDS))
def test_fuzz_residual_files(template: Home, job: str, key: str, content: bytes, directory: bool,
                             argv: list[str]) -> None:
    def prepare(home: Home) -> None:
        folder = home.dunscaith_dir / "residual" / job
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if directory:
            (folder / key).mkdir()
        else:
            (folder / key).write_bytes(content)
            os.chmod(folder / key, 0o600)

    _call(template, argv, prepare)


@st.composite
def damage(draw: st.DrawFn) -> tuple[str, int, bytes]:
    kind = draw(st.sampled_from(["zero", "flip", "truncate", "replace", "empty"]))
    return kind, draw(st.integers(0, 40_000)), draw(st.binary(min_size=1, max_size=64))


def _damage(db: Path, how: tuple[str, int, bytes]) -> None:
    kind, offset, data = how
    size = db.stat().st_size
    if kind == "empty":
        db.write_bytes(b"")
    elif kind == "truncate":
        os.truncate(db, offset % (size + 1))
    elif kind == "replace":
        db.write_bytes(data)
    else:
        with open(db, "r+b") as f:
            f.seek(offset % max(size, 1))
            f.write(b"\0" * 4096 if kind == "zero" else data)


@settings(FUZZ, max_examples=examples(80))
@example(how=("empty", 0, b"x"), argv=["list"])
@example(how=("zero", 8192, b"x"), argv=["list"])
@example(how=("zero", 8192, b"x"), argv=["status", "j1"])
@example(how=("zero", 8192, b"x"), argv=["prune", "j1"])
@example(how=("replace", 0, b"not a database"), argv=["doctor"])
@example(how=("flip", 8040, b"\x80"), argv=["list"])  # found by this suite: a byte that is not UTF-8
@given(how=damage(), argv=st.sampled_from([*READ_COMMANDS, ["hold", "j1"], ["cancel", "j2"], ["reconcile"],
                                           ["supervise", "j3"]]))
def test_fuzz_records(template: Home, how: tuple[str, int, bytes], argv: list[str]) -> None:
    _call(template, argv, lambda home: _damage(home.root / "records.db", how))


# Issue 22 item 10: the store deleted (or moved aside) while pointers of this host name its jobs. Whatever
# the command, no new store is made in its place, and it is refused in one line (the promises above).
@settings(FUZZ, max_examples=examples(20))
@example(argv=["status", "j1"])
@example(argv=["list"])
@example(argv=["doctor"])
@example(argv=["hold", "j1"])
@given(argv=st.sampled_from([*READ_COMMANDS, ["hold", "j1"], ["cancel", "j2"], ["reconcile", "j1"], ["supervise", "j3"],
                             ["submit", "--name", "new", "--", "true"]]))
def test_fuzz_a_missing_store_is_never_made_anew(template: Home, argv: list[str]) -> None:
    with fresh_copy(template) as home:
        db = home.root / "records.db"
        for path in (db, db.with_name("records.db-wal"), db.with_name("records.db-shm")):
            path.unlink(missing_ok=True)
        snapshot = before(home)
        ran = run_in_process("dunscaith", argv, home, home.env())
        check_promises(ran, home, *snapshot, argv=argv)
        assert not db.exists(), f"{argv}: a new store was made where pointers name jobs"
        if argv[0] != "doctor":
            assert ran.code == 2 and "is missing" in ran.stderr, (argv, ran.code, ran.stderr)


# Issue 38: bad inputs of submit, the settings and the job commands' --json refusals. Each is refused with one
# clear line on stderr and exit 2, and nothing is recorded (a request's refusal is itself recorded, as above).
# A FIFO lives outside the copy: the harness's snapshot reads every file of the copy, and would wait on it.
_FIFO_DIR = Path(tempfile.mkdtemp(prefix="fuzz-fifo-"))
atexit.register(shutil.rmtree, _FIFO_DIR, True)
FIFO = _FIFO_DIR / "fifo.sh"
os.mkfifo(FIFO)
PG = "[records.postgresql]\nserver_user_timeout = 5\nclient_user_timeout = 10\n"


def _scripts(home: Home) -> None:
    (home.cwd / "script.sh").write_text("echo hi\n")
    (home.cwd / "empty.sh").write_text("")


@st.composite
def bad_submit(draw: st.DrawFn) -> list[str]:
    """A submit line refused whatever the values drawn: a time with 60 or more after a colon, an index above
    the bound, a variable given twice, a script with a command, --job-exit-code on a sweep."""
    kind = draw(st.sampled_from(["time", "array", "env", "mix", "exit"]))
    small, big = st.integers(0, 99), st.integers(60, 10**6)
    if kind == "time":
        value = draw(st.sampled_from(["{a}:{b}", "{a}:{b}:{c}", "{a}:{c}:{b}", "1-{a}:{b}", "1-{a}:{c}:{b}"]))
        return ["submit", "-t", value.format(a=draw(small), b=draw(big), c=draw(st.integers(0, 59))), "--", "true"]
    if kind == "array":
        index = draw(st.integers(10**9 + 1, 10**40))
        spec = draw(st.sampled_from(["{i}", "0,{i}", "{i}-{j}", "0-5:{i}"]))
        return ["submit", "--name", "s", "--array", spec.format(i=index, j=index + 1), "--", "true"]
    if kind == "env":
        name = draw(st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True))
        return ["submit", "--env", f"{name}={draw(small)}", "--env", f"{name}=x", "--", "true"]
    if kind == "mix":
        return ["submit", draw(st.sampled_from(["script.sh", "empty.sh", "nope.sh"])), "--", "true"]
    return ["submit", "--name", "s", "--array", f"0-{draw(small)}", "--job-exit-code", "--", "true"]


@settings(FUZZ, max_examples=examples(40))
@example(argv=["submit", "--name", "s11", "--array", "99999999999999999999", "--", "true"], config="", env={})
@example(argv=["submit", "/dev/zero"], config="", env={})
@example(argv=["submit", str(FIFO)], config="", env={})
@example(argv=["submit", "script.sh", "--", "true"], config="", env={})
@example(argv=["submit", "-t", "25:61:00", "--", "true"], config="", env={})
@example(argv=["submit", "--env", "A=1", "--env", "A=2", "--", "true"], config="", env={})
@example(argv=["submit", "empty.sh"], config="", env={})
@example(argv=["submit", "--name", "sw", "--array", "0-1", "--job-exit-code", "--", "true"], config="", env={})
@example(argv=["--version", "extra"], config="", env={})
@example(argv=["submit", "--", "true"], config='[recovery]\nattempts = "3"\n', env={})
@example(argv=["list"], config="records = 5\n", env={})  # the harness sets DUNSCAITH_RECORDS__ROOT
@example(argv=["list"], config=PG, env={})
@example(argv=["hold", "j1", "--json"], config="", env={})
@example(argv=["release", "j1", "--json"], config="", env={})
@example(argv=["cancel", "j1", "--json"], config="", env={})
@example(argv=["give-up", "j1", "--json"], config="", env={})
@example(argv=["requeue", "j1", "--json"], config="", env={})
@example(argv=["resubmit", "j1", "--json"], config="", env={})
@given(argv=bad_submit(), config=st.just(""), env=st.just({}))
def test_fuzz_issue_38_bad_inputs_are_one_line_and_exit_2(template: Home, argv: list[str], config: str,
                                                            env: dict[str, str]) -> None:
    def prepare(home: Home) -> None:
        _scripts(home)
        if config:
            (home.dunscaith_dir / "config.toml").write_text(config)

    ran = _call(template, argv, prepare, env)
    lines = ran.stderr.splitlines()
    assert ran.code == 2 and len(lines) == 1 and lines[0].startswith("dunscaith: "), (argv, ran)
    if config:
        assert "configuration file" in lines[0], lines[0]  # the file named, not "variable DUNSCAITH_*"
    if "--json" in argv:
        assert json.loads(ran.stdout)["error"]["exit_code"] == 2, ran.stdout


# Issue 38: remote's bad inputs and a missing home. Each is one line and exit 2, nothing recorded, nothing
# written outside dunscaith's own files (the promises above): an ended instance, a folder holding only a
# stray lock and one of the user's own with a file in it, all beside the user's files (outside the root).
def _remote_places(home: Home) -> None:
    shutil.copytree(next((home.root / "local-scheduler").glob("*/instance")), home.cwd / "ended", symlinks=True)
    (home.cwd / "stray").mkdir(mode=0o700)
    (home.cwd / "stray" / "lock").write_text("")
    (home.cwd / "stray-folder").mkdir(mode=0o700)
    (home.cwd / "stray-folder" / "lock").mkdir()
    (home.cwd / "mine").mkdir(mode=0o700)
    (home.cwd / "mine" / "notes.txt").write_text("the user's")


def _one_line_exit_2(ran) -> None:  # type: ignore[no-untyped-def]
    assert ran.code == 2 and len(ran.stderr.strip().splitlines()) == 1, (ran.code, ran.stderr)


MISSING_HOME = "MISSING_HOME"  # the copy's base/nonexistent/home, given as HOME
ISSUE_38 = [
    ["remote", "terminate", "--grace", "inf", "ended"], ["remote", "terminate", "--wait", "inf", "ended"],
    ["remote", "terminate", "--grace", "1e400", "ended"], ["remote", "terminate", "--nonce", "", "ended"],
    ["remote", "terminate", "stray"], ["remote", "terminate", "stray-folder"], ["remote", "status", "stray"],
    ["remote", "run", "--instance-dir", "mine", "--", "true"],
    [MISSING_HOME, "list"], [MISSING_HOME, "list", "--json"], [MISSING_HOME, "status", "j1"],
    [MISSING_HOME, "submit", "--name", "j9", "--", "true"], [MISSING_HOME, "hold", "j1"],
]
if not __import__("dunscaith.adapters.process.exec_side", fromlist=["x"]).started_by_wrapper():
    # run here it would become a wrapper's child: only where this process has no pipes on fds 3 and 4
    ISSUE_38.append(["remote", "exec"])


def _each_case(test: Callable[..., None]) -> Callable[..., None]:
    """Every case of the issue is an example of its own: always run, before what hypothesis draws."""
    for case in reversed(ISSUE_38):
        test = example(case=case)(test)
    return test


@settings(FUZZ, max_examples=examples(len(ISSUE_38), quick=len(ISSUE_38)))
@_each_case
@given(case=st.sampled_from(ISSUE_38))
def test_fuzz_issue_38_refusals(template: Home, case: list[str]) -> None:
    with fresh_copy(template) as home:
        _remote_places(home)
        env = home.env()
        argv = case
        if case[0] == MISSING_HOME:
            argv = case[1:]
            env.update(HOME=str(home.base / "nonexistent" / "home"))
        snapshot = before(home)
        ran = run_in_process("dunscaith", argv, home, env)
        check_promises(ran, home, *snapshot, argv=argv)
        _plain(ran)
        _one_line_exit_2(ran)
        assert not (home.cwd / "mine" / "lock").exists() and not (home.base / "nonexistent").exists()


def _seconds_taken(value: str) -> bool:
    try:
        seconds = float(value)
    except ValueError:
        return False
    return math.isfinite(seconds) and 0 <= seconds <= 30 * 24 * 3600


@settings(FUZZ, max_examples=examples(60))
@example(option="--grace", value="inf")
@example(option="--wait", value="1e400")
@example(option="--grace", value="2592001")
@example(option="--nonce", value="")
@example(option="--nonce", value="\x1b[31m")
@given(option=st.sampled_from(["--grace", "--wait", "--nonce"]),
       value=st.one_of(st.sampled_from(["inf", "-inf", "nan", "1e400", "1e300", "-1", "0", "2592000", "2592001",
                                        "", " ", "abc", "1_0", "0x10", "infinity", "--help"]),
                       st.floats().map(repr), st.text(max_size=12).filter(lambda s: "\x00" not in s)))
def test_fuzz_remote_terminate_arguments(template: Home, option: str, value: str) -> None:
    """On an ended instance: a value out of range is one line and exit 2; a good one is `unrequested` (6)."""
    with fresh_copy(template) as home:
        _remote_places(home)
        argv = ["remote", "terminate", option, value, "ended"]
        snapshot = before(home)
        ran = run_in_process("dunscaith", argv, home, home.env())
        check_promises(ran, home, *snapshot, argv=argv)
        _plain(ran)
        good = (value.strip() != "" and value.isprintable()) if option == "--nonce" else _seconds_taken(value)
        if good:
            assert (ran.code, ran.stdout) == (6, "unrequested\n"), (ran.code, ran.stderr)
        else:
            _one_line_exit_2(ran)
