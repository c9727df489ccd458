"""The ``dunscaith`` console script: job commands and the ``remote`` process owner."""

from __future__ import annotations

import sys

import typer

from domain.model.jobs.errors import JobsError
from entrypoints.cli_support import finish_help, new_app, run, version_flag
from entrypoints.dunscaith import commands, config_cmd, doctor, emergency, forwarding, remote, status, submit
from entrypoints.dunscaith.render import EXIT_CODES
from ports.job_store import StoreError

app: typer.Typer = new_app("Run jobs under a foreground supervisor that never sends one twice.")
app.add_typer(remote.app, name="remote")
submit.register(app)
status.register(app)
app.command("stop")(emergency.stop)
commands.register(app)
doctor.register(app)
forwarding.register(app)
app.add_typer(config_cmd.app, name="config")

_J = "my-job"
finish_help(app, {
    "submit": ["dunscaith submit -- sh -c 'echo hi'", "dunscaith submit --follow --name train -- python train.py",
               "dunscaith submit --cluster hpc -p short -t 10:00 --mem 4G -c 4 -- ./run.sh",
               "dunscaith submit --cluster hpc --sbatch=--constraint=a100 job.sh"],
    "supervise": [f"dunscaith supervise {_J}", f"dunscaith supervise --follow {_J}"],
    "status": [f"dunscaith status {_J}", f"dunscaith status --json {_J}"],
    "list": ["dunscaith list", "dunscaith list --state failed --since 2d", "dunscaith list --wide --json"],
    "logs": [f"dunscaith logs {_J}", f"dunscaith logs --stderr {_J}", f"dunscaith logs --follow --attempt 2 {_J}"],
    "stop": [f"dunscaith stop --emergency {_J}", f"dunscaith stop --emergency --cluster hpc {_J}"],
    **{action: [f"dunscaith {action} {_J}", f"dunscaith {action} --json {_J}"]
       for action in ("hold", "release", "cancel", "give-up", "abandon", "requeue", "resubmit")},
    "reconcile": [f"dunscaith reconcile {_J}"],
    "prune": [f"dunscaith prune {_J}", "dunscaith prune --older-than 7d", "dunscaith prune --older-than 7d --outputs"],
    "forwarded": ["dunscaith forwarded 225dcad0c7f05500"],
    "doctor": ["dunscaith doctor", "dunscaith doctor --json"],
}, EXIT_CODES, {"forwarded": "Exit codes: 0 the owning host answered (the answer is printed); 2 an unknown request "
                             "id; 6 the host could not be asked (ask again). See docs/exit-codes.md."})
finish_help(config_cmd.app, {"show": ["dunscaith config show", "dunscaith config show --json"],
                             "path": ["dunscaith config path"]},
            "Exit codes: 0 shown; 2 a configuration that does not read. See docs/configuration.md.")


@app.callback()
def _root(ctx: typer.Context, version: bool = version_flag("dunscaith")) -> None:
    # `remote` owns one process and needs none of the job machinery: building the job container for it
    # would add its imports to the start-up of every wrapped process.
    # Forwarding's two commands build only what they use, for the same reason.
    if ctx.obj is None and ctx.invoked_subcommand not in ("remote", "_forwarded", "forwarded"):
        from entrypoints.dunscaith.container import Container

        container = Container()
        ctx.obj = container
        ctx.call_on_close(container.shutdown_resources)


def main(argv: list[str] | None = None) -> None:
    forwarding.ARGV[:] = sys.argv[1:] if argv is None else argv
    # A store that refuses (damaged, locked too long, a server gone) and a rule of the domain that refuses
    # are the user's to act on: one line and exit 2 wherever they surface, never an internal error.
    run(app, "dunscaith", argv, refusals=(StoreError, JobsError))
