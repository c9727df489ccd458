"""What every ``dunscaith`` command's help ends with: its examples and its exit codes.

Kept apart from the commands (and from render.py) so that adding them to a command costs no import: the
job commands are loaded only when one of them runs or shows its help (lazy_commands.py), and their
examples are added then.
"""

from __future__ import annotations

EXIT_CODES = ("Exit codes: 0 succeeded; 1 the outcome is not success; 2 bad input or refused; 3 internal error; "
              "4 the supervisor gave up; 5 work outstanding after supervise.wait; 128+n ended by signal n "
              "(the job goes on). See docs/exit-codes.md.")

_J = "my-job"
EXAMPLES: dict[str, list[str]] = {
    "submit": ["dunscaith submit -- sh -c 'echo hi'", "dunscaith submit --follow --name train -- python train.py",
               "dunscaith submit --cluster hpc -p short -t 10:00 --mem 4G -c 4 -- ./run.sh",
               "dunscaith submit --cluster hpc --sbatch=--constraint=a100 job.sh"],
    "supervise": [f"dunscaith supervise {_J}", f"dunscaith supervise --follow {_J}"],
    "status": [f"dunscaith status {_J}", f"dunscaith status --json {_J}"],
    "list": ["dunscaith list", "dunscaith list --state failed --since 2d", "dunscaith list --wide --json",
             "dunscaith list --limit 0"],
    "logs": [f"dunscaith logs {_J}", f"dunscaith logs --stderr {_J}", f"dunscaith logs --follow --attempt 2 {_J}"],
    "stop": [f"dunscaith stop --emergency {_J}", f"dunscaith stop --emergency --cluster hpc {_J}"],
    **{action: [f"dunscaith {action} {_J}", f"dunscaith {action} --json {_J}"]
       for action in ("hold", "release", "cancel", "give-up", "abandon", "requeue", "resubmit")},
    "reconcile": [f"dunscaith reconcile {_J}"],
    "prune": [f"dunscaith prune {_J}", "dunscaith prune --older-than 7d", "dunscaith prune --older-than 7d --outputs"],
    "forwarded": ["dunscaith forwarded 225dcad0c7f05500"],
    "doctor": ["dunscaith doctor", "dunscaith doctor --json"],
    "check": ["dunscaith check hpc", "dunscaith check --json local"],
}
EPILOGS: dict[str, str] = {
    "forwarded": "Exit codes: 0 the owning host answered (the answer is printed); 2 an unknown request id; 6 the "
                 "host could not be asked (ask again). See docs/exit-codes.md.",
}
CONFIG_EXAMPLES: dict[str, list[str]] = {"show": ["dunscaith config show", "dunscaith config show --json"],
                                         "path": ["dunscaith config path"]}
CONFIG_EXIT_CODES = "Exit codes: 0 shown; 2 a configuration that does not read. See docs/configuration.md."
