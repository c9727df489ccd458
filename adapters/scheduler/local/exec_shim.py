"""Run by ``dunscaith remote run`` as its worker program: load the object's environment, exec the job.

``python -I -S exec_shim.py ENV_FILE -- PROGRAM [ARGS...]``. The environment travels in a 0600 file
of the user's own object directory, never on a command line, where every user of the machine could
read it in ``ps``. ``exec`` keeps the process id, so the worker the process owner recorded (its pid,
its group, its stdout) is the job itself. Self-contained: imports nothing of the project.
"""

import json
import os
import sys


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("dunscaith local scheduler: usage: exec_shim.py ENV_FILE -- PROGRAM [ARGS...]\n")
        os._exit(2)
    env_file, program = argv[1], argv[3:]
    try:
        with open(env_file, "rb") as handle:
            env = json.load(handle)["env"]
    except (OSError, ValueError, KeyError) as exc:
        sys.stderr.write(f"dunscaith local scheduler: cannot read the environment {env_file}: {exc}\n")
        os._exit(127)
    # An object starts once, so its environment (tokens, passwords) need not stay on disk after this.
    try:
        os.unlink(env_file)
    except OSError:
        pass
    # The launch lock (and anything else the process owner inherited) is not the job's business.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    try:
        os.execvpe(program[0], program, env)
    except (OSError, ValueError) as exc:  # ValueError: an argv execve refuses (an empty program, a NUL)
        why = exc.strerror if isinstance(exc, OSError) else str(exc)
        sys.stderr.write(f"dunscaith local scheduler: cannot run {program[0]}: {why}\n")
        os._exit(127)


if __name__ == "__main__":
    main(sys.argv)
