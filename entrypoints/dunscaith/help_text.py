"""What every ``dunscaith`` command's help ends with: its examples and its exit codes.

Kept apart from the commands (and from render.py) so that adding them to a command costs no import: the
job commands are loaded only when one of them runs or shows its help (lazy_commands.py), and their
examples are added then.
"""

from __future__ import annotations

# A forwarded command exits as it did on the owning host; these two codes are the hop's own (forwarding.md).
_FORWARDED = ("; for another host's job the command runs there and exits as it did, or 2 it never ran, 6 the "
              "connection was lost after it was sent (it may have run: dunscaith forwarded ID)")
_SEE = " See docs/exit-codes.md."
# submit, supervise, reconcile: a supervision's ending (docs/exit-codes.md's first table).
EXIT_CODES = ("Exit codes: 0 succeeded; 1 the outcome is not success; 2 bad input or refused; 3 internal error; "
              "4 the supervisor gave up; 5 work outstanding after supervise.wait; 128+n ended by signal n "
              "(the job goes on)." + _SEE)
# submit, supervise: --job-exit-code puts the job's own code in place of 0/1 (docs/exit-codes.md).
_JOB_EXIT = (" With --job-exit-code (or supervise.exit_code = \"job\"): the job's own exit code, or 128+n when "
             "signal n ended it, once it has its outcome; --json's exit_code_from says whose code it is.")
SUBMIT_EXIT_CODES = EXIT_CODES.removesuffix(_SEE) + _JOB_EXIT + _SEE
_SUPERVISED = EXIT_CODES.removesuffix("." + _SEE) + _FORWARDED + "." + _SEE
_REQUEST = ("Exit codes: 0 confirmed; 2 refused, confirmed but not carried out, or bad input; 3 internal error; "
            "5 not answered within commands.wait (the request stays); 128+n ended by signal n while waiting"
            + _FORWARDED + ". On a sweep (NAME, NAME --state S): the largest of its elements' codes, 0 when "
            "every element asked was confirmed (or none was chosen). See docs/job-commands.md.")

_J = "my-job"
EXAMPLES: dict[str, list[str]] = {
    "submit": ["dunscaith submit -- sh -c 'echo hi'", "dunscaith submit --follow --name train -- python train.py",
               "dunscaith submit --cluster hpc -p short -t 10:00 --mem 4G -c 4 -- ./run.sh",
               "dunscaith submit --cluster hpc --scheduler-option=--constraint=a100 job.sh",
               "dunscaith submit --json -- ./run.sh > result.json", "dunscaith submit --job-exit-code -- ./run.sh",
               "dunscaith submit --parsable -- ./run.sh 2>run.log",
               "dunscaith submit --name exp --array 0-99 --max-running 10 -- python train.py --seed {}",
               "dunscaith submit --name lr --each rates.txt -p short -- python train.py --lr {lr}",
               "dunscaith submit --name sum --after exp -- python reduce.py",
               "dunscaith submit --pipeline study.toml",
               "dunscaith submit -t 4:00:00 --signal-before USR1@300 --requeue-on-time-limit 10 -- ./train.sh",
               "dunscaith submit --mem 4G --on-out-of-memory memory_factor=2,max_memory=64G -- ./run.sh"],
    "supervise": [f"dunscaith supervise {_J}", f"dunscaith supervise --follow {_J}",
                  f"dunscaith supervise --json --job-exit-code {_J}",
                  "dunscaith supervise exp          # every element of sweep exp no live supervisor holds",
                  "dunscaith supervise --all        # every Unattended job and sweep element of this host"],
    "status": [f"dunscaith status {_J}", f"dunscaith status --json {_J}", f"dunscaith status --watch {_J}",
               "dunscaith status exp",
               "dunscaith status exp --state failed", "dunscaith status exp-12"],
    "watch": [f"dunscaith watch {_J}", f"dunscaith status --watch {_J}"],
    "list": ["dunscaith list", "dunscaith list --expand", "dunscaith list --state failed --since 2d",
             "dunscaith list --format name,state,elapsed",
             "COLUMNS=120 dunscaith list", "dunscaith list --wide", "dunscaith list --limit 0 --json"],
    "logs": ["dunscaith logs", f"dunscaith logs {_J}", f"dunscaith logs --stderr {_J}",
             f"dunscaith logs --follow --attempt 2 {_J}", f"dunscaith logs --tail 20 --follow {_J}",
             f"dunscaith logs --all {_J}"],
    "events": [f"dunscaith events {_J}", f"dunscaith events --json {_J} | jq -r .text"],
    "stop": [f"dunscaith stop --emergency {_J}", f"dunscaith stop --emergency --cluster hpc {_J}"],
    **{action: [f"dunscaith {action} {_J}", f"dunscaith {action} --json {_J}", f"dunscaith {action} exp",
                f"dunscaith {action} exp-7", f"dunscaith {action} exp --state pending"]
       for action in ("hold", "release", "cancel", "give-up", "abandon", "requeue")},
    "resubmit": [f"dunscaith resubmit {_J}", f"dunscaith resubmit --json {_J}", "dunscaith resubmit exp --failed",
                 "dunscaith resubmit exp --failed --json", f"dunscaith resubmit {_J} --memory 16G --time 2:00:00",
                 "dunscaith resubmit exp --failed --memory 16G"],
    "reconcile": [f"dunscaith reconcile {_J}"],
    "prune": [f"dunscaith prune {_J}", "dunscaith prune --older-than 7d", "dunscaith prune --older-than 7d --outputs"],
    "forwarded": ["dunscaith forwarded 225dcad0c7f05500"],
    "doctor": ["dunscaith doctor", "dunscaith doctor --json"],
    "check": ["dunscaith check hpc", "dunscaith check --json local"],
}
EPILOGS: dict[str, str] = {
    "submit": SUBMIT_EXIT_CODES,
    "supervise": _SUPERVISED.removesuffix(_SEE) + _JOB_EXIT + _SEE,
    "reconcile": _SUPERVISED,
    "status": ("Exit codes: 0 succeeded or no outcome yet (running, held, Unattended); 1 the outcome is not "
               "success (failed, cancelled, abandoned, escalated, refused); 2 bad input, no such job, or a "
               "record or store that does not read; 3 internal error" + _FORWARDED + ". Of a sweep: 1 when "
               "some element's outcome is not success, else 0. Without JOB: as list. "
               "With --watch: as watch (the supervisor's codes)." + _SEE),
    "watch": ("Exit codes: 0 succeeded; 1 the outcome is not success; 2 refused, bad input, no such job, or a "
              "record that does not read; 3 internal error; 5 its supervisor ended with work outstanding (as "
              "the supervisor exits); 130 (128+n) Ctrl-C or signal n ended the watch (the job is never touched)"
              + _FORWARDED + "." + _SEE),
    "list": "Exit codes: 0 listed (a damaged record or pointer is listed as such); 2 bad input (an unknown "
            "--format column, --state or --cluster), or a store that does not open; 3 internal error. Lines are cut "
            "to COLUMNS or the terminal's width; piped output keeps whole lines." + _SEE,
    "logs": ("Exit codes: 0 printed; 2 bad input (--all with --follow or --stderr), no such job or attempt (no "
             "job at all, without JOB), or an "
             "output that cannot be read (with --all: either stream, the other printed); "
             "3 internal error" + _FORWARDED + "." + _SEE),
    "events": ("Exit codes: 0 printed; 2 bad input, no such job, or a store that does not read; 3 internal error"
               + _FORWARDED + "." + _SEE),
    "stop": "Exit codes: 0 everything of the job's name that was found is stopped (or nothing was found); 1 "
            "the scheduler could not stop something (named on stderr); 2 bad input; 3 internal error." + _SEE,
    **{action: _REQUEST for action in ("hold", "release", "cancel", "give-up", "abandon", "requeue", "resubmit")},
    "prune": ("Exit codes: 0 done (or nothing to prune); 2 bad input, a job that is not settled, or a record "
              "that does not read; 3 internal error" + _FORWARDED + ". See docs/job-commands.md."),
    "doctor": "Exit codes: 0 nothing found; 1 a problem found (each on its own line); 2 bad input (the "
              "configuration); 3 internal error. See docs/record-backing.md.",
    "forwarded": "Exit codes: 0 the owning host answered (the answer is printed); 2 an unknown request id; 6 the "
                 "host could not be asked (ask again). See docs/exit-codes.md.",
}
CONFIG_EXAMPLES: dict[str, list[str]] = {"show": ["dunscaith config show", "dunscaith config show --json"],
                                         "path": ["dunscaith config path"]}
CONFIG_EXIT_CODES = "Exit codes: 0 shown; 2 a configuration that does not read. See docs/configuration.md."
