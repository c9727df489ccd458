"""The job commands on a PostgreSQL store, as a user runs them: real processes, the local scheduler, a real
PostgreSQL 15. Two record roots stand for two login nodes that share the one store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from dunscaith.adapters.scheduler.local.scheduler import LocalScheduler
from dunscaith.adapters.store.postgres.store import PostgresStore
from dunscaith.adapters.store.postgres.target import PostgresTarget
from tests.e2e.jobs.cli import Cli, await_condition, await_long_sleep, await_state
from tests.infra.postgres import PASSWORD, PASSWORD_USER, PostgresTestServer, free_port, private_server

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


@pytest.fixture
def url(postgres_server: PostgresTestServer, postgres_db: str) -> str:
    return postgres_server.url(postgres_db)


def _env(url: str, **extra: str) -> dict[str, str]:
    return {"DUNSCAITH_RECORDS__BACKEND": "postgresql", "DUNSCAITH_RECORDS__URL": url, **extra}


def _kinds(url: str, job: str) -> list[str]:
    with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
        return [line.kind for line in store.read(job).events]  # type: ignore[arg-type]


def _other_node(cli: Cli) -> dict[str, str]:
    """Another login node's own records.root (its local objects, its caches): the store is shared."""
    other = cli.tmp / "login2-records"
    return {"DUNSCAITH_RECORDS__ROOT": str(other)}


def test_submit_on_postgresql_and_the_job_is_seen_from_another_record_root(cli: Cli, url: str) -> None:
    done = cli.run("submit", "--name", "pg-1", "--", "sh", "-c", "echo hello", env=_env(url))
    assert done.returncode == 0, done.stderr
    seen = cli.run("status", "pg-1", "--json", env=_env(url, **_other_node(cli)))
    assert seen.returncode == 0, seen.stderr
    assert '"state": "succeeded"' in seen.stdout.replace('":"', '": "')
    listed = cli.run("list", env=_env(url, **_other_node(cli)))
    assert listed.returncode == 0 and "pg-1" in listed.stdout
    kinds = _kinds(url, "pg-1")
    assert kinds.count("submitting") == 1 and kinds.count("released") == 1 and kinds[-1] == "settled"
    assert not (cli.root / "records.db").exists()  # the shared store, not this host's SQLite


def test_a_server_that_is_down_at_submit_is_one_line_exit_2_and_nothing_is_sent(cli: Cli) -> None:
    url = f"postgresql://nobody@127.0.0.1:{free_port()}/records"
    done = cli.run("submit", "--name", "pg-down", "--", "true", env=_env(url))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be reached" in lines[0] and "Traceback" not in done.stderr
    objects = cli.root / "local-scheduler"
    assert not objects.exists() or not any(objects.iterdir())


def test_a_password_file_open_to_others_is_refused_in_one_line_that_never_shows_it(
        cli: Cli, url: str, postgres_server: PostgresTestServer) -> None:
    path = cli.tmp / "pg-password"
    path.write_text(PASSWORD + "\n")
    path.chmod(0o644)
    url = postgres_server.url(url.rsplit("/", 1)[1], PASSWORD_USER)
    done = cli.run("submit", "--name", "pg-pw", "--", "true",
                   env=_env(url, DUNSCAITH_RECORDS__PASSWORD_FILE=str(path)))
    assert done.returncode == 2 and "chmod 600" in done.stderr
    assert PASSWORD not in done.stderr + done.stdout
    path.chmod(0o600)
    done = cli.run("submit", "--name", "pg-pw", "--", "true",
                   env=_env(url, DUNSCAITH_RECORDS__PASSWORD_FILE=str(path)))
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stderr + done.stdout
    assert PASSWORD not in "".join(p.read_text() for p in (cli.tmp / "home").rglob("*") if p.is_file())


def test_a_supervisor_killed_mid_job_is_taken_over_by_supervise_in_another_process(cli: Cli, url: str) -> None:
    supervisor = cli.start("submit", "--name", "pg-kill", "--", "sh", "-c", "sleep 3; echo done",
                                   env=_env(url))
    await_state_env(cli, "pg-kill", "running", url)
    os.killpg(supervisor.pid, signal.SIGKILL)
    supervisor.wait()
    done = cli.run("supervise", "pg-kill", env=_env(url))
    assert done.returncode == 0, done.stderr
    kinds = _kinds(url, "pg-kill")
    assert kinds.count("submitting") == 1 and kinds.count("released") == 1 and kinds[-2:] == ["outcome", "settled"]
    (object_dir,) = LocalScheduler(cli.root).base.iterdir()
    assert (object_dir / "stdout").read_text() == "done\n"


def test_a_command_from_another_record_root_is_answered_by_the_live_supervisor(cli: Cli, url: str) -> None:
    supervisor = cli.start("submit", "--name", "pg-cancel", "--", "sleep", "120", env=_env(url))
    await_state_env(cli, "pg-cancel", "running", url)
    done = cli.run("cancel", "pg-cancel", "--json", env=_env(url, **_other_node(cli)))
    assert done.returncode == 0, done.stderr
    assert '"its supervisor"' in done.stdout.replace('":"', '": "')
    assert supervisor.wait(timeout=60) == 1


def test_a_server_restart_mid_supervision_stops_the_supervisor_with_exit_4_and_supervise_carries_on(cli: Cli) -> None:
    with private_server() as server:
        url = server.url(server.new_database())
        supervisor = cli.start("submit", "--name", "pg-restart", "--", "sh", "-c", "sleep 4; echo done", env=_env(url))
        await_state_env(cli, "pg-restart", "running", url)
        server.restart()
        assert supervisor.wait(timeout=60) == 4
        err = supervisor.stderr.read() if supervisor.stderr else ""
        assert "lost the job's lock" in err and "supervise pg-restart" in err
        done = cli.run("supervise", "pg-restart", env=_env(url))
        assert done.returncode == 0, done.stderr
        kinds = _kinds(url, "pg-restart")
        assert kinds.count("submitting") == 1 and kinds.count("released") == 1
        assert kinds[-2:] == ["outcome", "settled"]


def await_state_env(cli: Cli, job: str, state: str, url: str) -> None:
    original = cli.env

    def env(**extra: str) -> dict[str, str]:
        return original(**_env(url), **extra)

    cli.env = env  # type: ignore[method-assign]
    try:
        await_state(cli, job, state, timeout=120)
    finally:
        cli.env = original  # type: ignore[method-assign]



def test_a_pointer_written_on_another_login_node_for_the_shared_store_does_not_send_commands_there(
        cli: Cli, url: str) -> None:
    supervisor = cli.start("submit", "--name", "pg-ptr", "--", "sleep", "120", env=_env(url))
    await_state_env(cli, "pg-ptr", "running", url)
    pointer = cli.tmp / "home" / ".config" / "dunscaith" / "jobs" / "pg-ptr"
    location = PostgresTarget.from_settings(url).location()
    text = json.loads(pointer.read_text())
    assert text["record_root"] == location  # the pointer names the store, not a host's root
    text.update({"host": "login2", "root_hostname": "login2", "root_machine_id": "m2"})
    pointer.write_text(json.dumps(text))
    listed = cli.run("list", "--json", env=_env(url))
    assert listed.returncode == 0, listed.stderr
    shown = json.loads(listed.stdout)
    assert [j["job"] for j in shown["jobs"]] == ["pg-ptr"] and shown["pointers"] == []  # from the store, once
    done = cli.run("cancel", "pg-ptr", "--json", env=_env(url))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["by"] == "its supervisor"
    assert supervisor.wait(timeout=60) == 1


def test_a_local_job_submitted_on_another_login_node_is_forwarded_there_and_nothing_is_done_here(
        cli: Cli, url: str) -> None:
    """Its objects are login9's processes, so the command goes to login9 over SSH (here one that cannot
    connect: a ProxyCommand that fails, so no name is even looked up) and nothing is done here."""
    from dunscaith.adapters.clock.system import SystemClock
    from dunscaith.domain.model.jobs.filesystem import Filesystem
    from dunscaith.domain.model.jobs.ids import JobId
    from dunscaith.domain.model.jobs.record import HostIdentity
    from dunscaith.domain.model.jobs.spec import JobSpec
    from dunscaith.domain.services.jobs.submit import RecordJob
    from dunscaith.entrypoints.dunscaith.root.kinds import capabilities
    from tests.unit.jobs.helpers import NoCrash

    class Login9:
        def identity(self) -> HostIdentity:
            return HostIdentity(machine_id="m9", hostname="login9")

        def filesystem(self, path: Path) -> Filesystem:
            return Filesystem("ext4", is_network=False)

    with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
        RecordJob(store, SystemClock(), NoCrash(), Login9(), capabilities=capabilities)(  # as submit records it
            JobSpec(JobId("pg-there"), "local", "local", ("sleep", "60")))
    no_ssh = cli.tmp / "no-ssh-config"
    no_ssh.write_text("Host *\n    ProxyCommand /bin/false\n")
    for args in (["cancel", "pg-there"], ["supervise", "pg-there"]):
        done = cli.run(*args, env=_env(url, DUNSCAITH_FORWARDING__SSH_CONFIG=str(no_ssh),
                                     DUNSCAITH_FORWARDING__TRANSPORT="openssh"))
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert "login9" in line and "nothing ran on login9" in line, line
    assert cli.run("status", "pg-there", env=_env(url)).returncode == 0  # reading is fine from anywhere
    assert _kinds(url, "pg-there") == ["job-recorded"]  # nothing was done


def test_fifty_concurrent_commands_against_one_supervised_job_are_each_answered_once(cli: Cli, url: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    supervisor = cli.start("submit", "--name", "pg-busy", "--", "sleep", "120", env=_env(url))
    try:
        await_state_env(cli, "pg-busy", "running", url)
        actions = ["give-up" if n % 2 else "release" for n in range(50)]
        with ThreadPoolExecutor(max_workers=50) as pool:
            done = list(pool.map(lambda a: cli.run(a, "pg-busy", "--json", timeout=300,
                                                   env=_env(url, DUNSCAITH_COMMANDS__WAIT="240")), actions))
        for action, d in zip(actions, done, strict=True):
            answer = json.loads(d.stdout)
            expected = ("confirmed", 0) if action == "give-up" else ("refused", 2)
            assert (answer["answer"], d.returncode) == expected, (action, d.stdout, d.stderr)
        ids = [json.loads(d.stdout)["request"] for d in done]
        assert len(set(ids)) == 50
    finally:
        cli.run("stop", "--emergency", "pg-busy", env=_env(url))
        supervisor.wait(timeout=60)
    with PostgresStore.open(PostgresTarget.from_settings(url)) as store:
        lines = store.read("pg-busy").events  # type: ignore[arg-type]
    requests = [line.data["request"] for line in lines if line.kind == "request"]
    answers = [line.data["request"] for line in lines if line.kind == "answer"]
    assert sorted(requests) == sorted(answers) == sorted(ids)  # none lost, each answered once


# --- damage on a PostgreSQL store (issue 10): one job's, contained; doctor's integrity check ----------------

def _damage(server: PostgresTestServer, db: str, sql: str) -> None:
    """Behind dunscaith's back, as a database administrator could: the append-only triggers bypassed."""
    server.psql(db, f"SET session_replication_role = replica; {sql}")


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode in (1, 2), (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


def test_one_jobs_undecodable_event_on_postgresql_damages_that_job_only(
        cli: Cli, url: str, postgres_server: PostgresTestServer, postgres_db: str) -> None:
    for job in ("pg-d1", "pg-d2", "pg-d3"):
        assert cli.run("submit", "--name", job, "--", "true", env=_env(url)).returncode == 0
    _damage(postgres_server, postgres_db,
            "UPDATE events SET data = '{\"unfinished' WHERE seq = 2 AND job_id = (SELECT id FROM jobs WHERE name = "
            "'pg-d2')")
    listing = cli.run("list", env=_env(url))
    assert listing.returncode == 0 and "internal error" not in listing.stderr, listing.stderr
    assert "pg-d1" in listing.stdout and "pg-d3" in listing.stdout
    damaged = [line for line in listing.stdout.splitlines() if "damaged" in line]
    assert len(damaged) == 1, listing.stdout
    assert damaged[0].startswith("pg-d2  damaged") and "at event 2" in damaged[0]
    rows = json.loads(cli.run("list", "--json", env=_env(url)).stdout)["damaged"]
    assert [(r["job"], r["what"]) for r in rows] == [("pg-d2", "record")]
    for args in (["status", "pg-d2"], ["status", "pg-d2", "--json"], ["cancel", "pg-d2"], ["prune", "pg-d2"],
                 ["supervise", "pg-d2"]):
        done = cli.run(*args, env=_env(url))
        line = _one_line(done)
        assert done.returncode == 2 and "pg-d2" in line and "damaged at event 2" in line, (args, line)
    assert cli.run("status", "pg-d1", env=_env(url)).returncode == 0  # the others are untouched
    doctor = cli.run("doctor", env=_env(url))
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert "PROBLEM  job pg-d2: its record does not read" in doctor.stdout
    assert "ok       store: " in doctor.stdout  # the store itself passes: the damage is that job's


def test_doctor_on_postgresql_reports_a_hole_in_a_record_and_missing_append_only_triggers(
        cli: Cli, url: str, postgres_server: PostgresTestServer, postgres_db: str) -> None:
    for job in ("pg-g1", "pg-g2"):
        assert cli.run("submit", "--name", job, "--", "true", env=_env(url)).returncode == 0
    assert cli.run("doctor", env=_env(url)).returncode == 0
    _damage(postgres_server, postgres_db,
            "DELETE FROM events WHERE seq = 3 AND job_id = (SELECT id FROM jobs WHERE name = 'pg-g1')")
    line = _one_line(cli.run("status", "pg-g1", env=_env(url)))
    assert "event 3 is missing" in line
    assert cli.run("status", "pg-g2", env=_env(url)).returncode == 0
    postgres_server.psql(postgres_db, "ALTER TABLE events DISABLE TRIGGER events_append_only_update")
    doctor = cli.run("doctor", env=_env(url))
    assert doctor.returncode == 1
    (store,) = [line for line in doctor.stdout.splitlines() if line.startswith("PROBLEM  store:")]
    assert "1 job(s) with events missing: pg-g1" in store and "append-only" in store
    assert "PROBLEM  job pg-g1" in doctor.stdout and "pg-g2" not in doctor.stdout.replace("2 job(s)", "")
    listing = cli.run("list", env=_env(url))  # list still lists, the hole shown as that job's damage
    assert listing.returncode == 0 and "pg-g2" in listing.stdout and "pg-g1  damaged" in listing.stdout


# --- a connection pooler between dunscaith and the server --------------------------------------------------

@pytest.mark.parametrize("pool_mode", ["transaction", "session"])
def test_a_url_through_pgbouncer_is_refused_in_one_line_before_anything_is_recorded(
        cli: Cli, postgres_server: PostgresTestServer, postgres_db: str, pool_mode: str) -> None:
    from tests.infra.postgres import PostgresUnavailable, pgbouncer

    try:
        bouncer = pgbouncer(postgres_server, pool_mode)
        address = bouncer.__enter__()
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    try:
        pooled = f"postgresql://dunscaith@{address}/{postgres_db}"
        for args in (["submit", "--name", "pg-pooled", "--", "true"], ["list"], ["status", "pg-pooled"]):
            done = cli.run(*args, env=_env(pooled))
            assert done.returncode == 2, (args, done.stdout, done.stderr)
            line = _one_line(done)
            assert "goes through a connection pooler" in line and "connect to PostgreSQL directly" in line
        doctor = cli.run("doctor", env=_env(pooled))  # doctor reports it as the store's problem
        assert doctor.returncode == 1 and "PROBLEM  store: " in doctor.stdout
        assert "goes through a connection pooler" in doctor.stdout
    finally:
        bouncer.__exit__(None, None, None)
    direct = postgres_server.url(postgres_db)
    assert postgres_server.psql(postgres_db, "SELECT to_regclass('jobs') IS NULL") == "t"  # nothing migrated
    assert cli.run("list", "--json", env=_env(direct)).returncode == 0
    objects = cli.root / "local-scheduler"
    assert not objects.exists() or not any(objects.iterdir())  # nothing sent


def _on_postgres(cli: Cli, url: str) -> None:
    """Every command of this test on the shared store (status, the awaits) unless told otherwise."""
    original = cli.env

    def env(**extra: str) -> dict[str, str]:
        return original(**{**_env(url), **extra})

    cli.env = env  # type: ignore[method-assign]


def _listener_pids(server: PostgresTestServer, db: str) -> list[int]:
    out = server.psql(db, "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()")
    return [int(word) for word in out.split() if word.isdigit()]


@pytest.mark.parametrize("request_word", ["cancel", "hold"])
def test_a_request_from_another_login_node_wakes_a_supervisor_asleep_to_its_next_poll(
        cli: Cli, url: str, request_word: str) -> None:
    """supervise.poll = 3600: once the quick polls after the start have grown, the supervisor reads its
    record only when the server notifies it; the request, which waits 5 s for an answer, is answered by it."""
    _on_postgres(cli, url)
    job = f"pg-asleep-{request_word}"
    supervisor = cli.start("submit", "--name", job, "--", "sleep", "300", DUNSCAITH_SUPERVISE__POLL="3600")
    try:
        await_state(cli, job, "running", timeout=120)
        await_long_sleep(cli, job, 15)
        assert cli.status(job)["supervisor"]["healthy"]  # asleep, not late: the lock says when it loops next
        done = cli.run(request_word, job, "--json", DUNSCAITH_COMMANDS__WAIT="5", env=_other_node(cli))
        # a running job cannot be held: the supervisor's own refusal (exit 2), at once, is the answer
        expected, code = {"cancel": ("confirmed", 0), "hold": ("refused", 2)}[request_word]
        assert done.returncode == code, done.stdout + done.stderr
        answer = json.loads(done.stdout)
        assert (answer["answer"], answer["by"]) == (expected, "its supervisor")
    finally:
        if supervisor.poll() is None:
            cli.run("cancel", job)
        supervisor.wait(timeout=60)


def test_a_supervisor_whose_listening_connection_is_killed_says_so_listens_again_and_still_answers(
        cli: Cli, url: str, postgres_server: PostgresTestServer, postgres_db: str) -> None:
    _on_postgres(cli, url)
    supervisor = cli.start("submit", "--name", "pg-relisten", "--", "sleep", "300", DUNSCAITH_SUPERVISE__POLL="3")
    await_state(cli, "pg-relisten", "running", timeout=120)
    await_long_sleep(cli, "pg-relisten", 5)  # longer than supervise.poll: it trusts the server's notice
    (pid,) = _listener_pids(postgres_server, postgres_db)
    postgres_server.psql(postgres_db, f"SELECT pg_terminate_backend({pid})")
    await_condition(lambda: _listener_pids(postgres_server, postgres_db) not in ([], [pid]), 60,
                    "the supervisor to listen again")
    done = cli.run("cancel", "pg-relisten", "--json", DUNSCAITH_COMMANDS__WAIT="10", env=_other_node(cli))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["by"] == "its supervisor"
    assert supervisor.wait(timeout=60) == 1
    out = supervisor.stdout.read() if supervisor.stdout else ""
    assert "the store's notice of appends is lost (reconnecting)" in out
    assert "requests are answered within supervise.poll (3 s) meanwhile" in out
    assert "the store's notice of appends is back" in out
    kinds = _kinds(url, "pg-relisten")
    assert kinds.count("submitting") == 1 and kinds.count("released") == 1
