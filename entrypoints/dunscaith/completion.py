"""Completion of names on TAB (docs/completion.md), answered before typer is imported.

A shell asks with typer's (click's) completion protocol: ``_DUNSCAITH_COMPLETE=complete_bash`` with
``COMP_WORDS`` and ``COMP_CWORD``; ``complete_zsh`` and ``complete_fish`` with ``_TYPER_COMPLETE_ARGS``
(fish also ``_TYPER_COMPLETE_FISH_ACTION``: ``get-args`` or ``is-args``). Where the word asked for is a
job's name (the JOB of ``status``, ``cancel``, ...) or a cluster's (``--cluster``, ``check CLUSTER``),
this module answers: the names of the pointer folder (``~/.config/dunscaith/jobs/``, one file per job
this home recorded), the sweeps among them for a command that takes a sweep (one element's pointer read
for each), and the configuration's ``[clusters.*]`` tables (and ``local``, always there). It reads a
folder's names, one pointer a sweep and one TOML file; nothing else. Anything else (a command's name, an option, an
option's value) goes on to the typer app, which completes commands and options as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from dunscaith.entrypoints.dunscaith.routing import ROUTED

COMPLETE_VAR = "_DUNSCAITH_COMPLETE"
_JSON = frozenset({"--json"})
# command -> the flags it takes besides its JOB argument (none of them takes a value); a line with any
# other word before the one asked for goes on to typer. The routed commands' flags are routing's own table.
JOB_COMMANDS: dict[str, frozenset[str]] = {
    **ROUTED,
    "logs": frozenset({"--stderr", "--follow", "-f", "--all"}),
    "stop": frozenset({"--emergency", "--json"}),
    "prune": frozenset({"--outputs", "--json"}),
}
# the job commands whose word may name a sweep (docs/sweeps.md): they complete sweep names too
SWEEP_COMMANDS = frozenset({"status", "supervise", "hold", "release", "cancel", "give-up", "abandon", "requeue",
                            "resubmit"})
_POINTER_BYTES = 64 * 1024  # a pointer is a few hundred bytes; more is not one
CLUSTER_OPTION = "--cluster"
CLUSTER_COMMANDS = frozenset({"submit", "list", "stop"})  # the commands that take --cluster NAME
CLUSTER_ARGUMENT = {"check": _JSON}  # CLUSTER as the argument
LOCAL = "local"  # the cluster every configuration has


def _split(line: str) -> list[str]:
    """A command line as the shell wrote it, in words (click's split: quotes honoured, an open one closed)."""
    import shlex

    lex = shlex.shlex(line, posix=True)
    lex.whitespace_split = True
    lex.commenters = ""
    words: list[str] = []
    try:
        for word in lex:
            words.append(word)
    except ValueError:  # an open quote: what was read, and the rest as the last word
        words.append(lex.token)
    return words


def request(env: Mapping[str, str]) -> tuple[str, list[str], str] | None:
    """(shell, the words before the one asked for, that word's beginning), or None: not ours to answer."""
    instruction = env.get(COMPLETE_VAR, "")
    shell = instruction.removeprefix("complete_")
    if shell == "bash":
        try:
            words, at = _split(env["COMP_WORDS"]), int(env["COMP_CWORD"])
        except (KeyError, ValueError):
            return None
        return shell, words[1:at], words[at] if at < len(words) else ""
    if shell in ("zsh", "fish"):
        line = env.get("_TYPER_COMPLETE_ARGS", "")
        words = _split(line)[1:]
        if words and not line.endswith(" "):
            return shell, words[:-1], words[-1]
        return shell, words, ""
    return None


def wanted(args: Sequence[str], incomplete: str) -> str | None:
    """Which names the word asked for takes: "jobs", "clusters", or None (typer answers)."""
    if not args or incomplete.startswith("-"):
        return None
    command, rest = args[0], list(args[1:])
    if rest and rest[-1] == CLUSTER_OPTION:
        return "clusters" if command in CLUSTER_COMMANDS else None
    for table, kind in ((JOB_COMMANDS, "jobs"), (CLUSTER_ARGUMENT, "clusters")):
        if command in table:
            # only flags (and --cluster NAME) so far: the word asked for is the command's argument
            words = iter(rest)
            for word in words:
                if word == CLUSTER_OPTION and command in CLUSTER_COMMANDS:
                    next(words, None)
                elif word not in table[command]:
                    return None
            return kind
    return None


def job_names(env: Mapping[str, str]) -> list[str]:
    """The pointer folder's names: a job or a sweep this home recorded (a dot file is the index's)."""
    from dunscaith.entrypoints.dunscaith.root.settings_paths import config_file

    try:
        return sorted(name for name in os.listdir(config_file(env).parent / "jobs") if not name.startswith("."))
    except OSError:
        return []


def sweep_names(env: Mapping[str, str], jobs: Sequence[str], incomplete: str) -> list[str]:
    """The sweeps among ``jobs`` (the pointer folder's names) that begin with ``incomplete``: a sweep has no
    pointer of its own, so each NAME of an element NAME-INDEX is checked in one element's pointer (its
    ``sweep``), one small read a sweep however many elements it has."""
    import json

    from dunscaith.entrypoints.dunscaith.root.settings_paths import config_file

    taken = set(jobs)
    candidates: dict[str, str] = {}  # a possible sweep's name -> one element's name
    for job in jobs:
        stem, _, index = job.rpartition("-")
        if stem and index.isdigit() and stem.startswith(incomplete) and stem not in taken:
            candidates.setdefault(stem, job)
    folder = config_file(env).parent / "jobs"
    sweeps = []
    for stem, element in candidates.items():
        try:
            with open(folder / element, "rb") as file:
                said = json.loads(file.read(_POINTER_BYTES)).get("sweep")
        except (OSError, ValueError, AttributeError):  # not a pointer that reads: not offered
            continue
        if said == stem:
            sweeps.append(stem)
    return sweeps


def cluster_names(env: Mapping[str, str]) -> list[str]:
    """``local`` and every ``[clusters.NAME]`` of the configuration file (an unreadable one: ``local``)."""
    import tomllib

    from dunscaith.entrypoints.dunscaith.root.settings_paths import config_file

    names = {LOCAL}
    try:
        with open(config_file(env), "rb") as file:
            clusters = tomllib.load(file).get("clusters", {})
        if isinstance(clusters, dict):
            names.update(str(name) for name in clusters)
    except (OSError, ValueError):
        pass
    return sorted(names)


def answer(shell: str, names: list[str], env: Mapping[str, str]) -> tuple[str, int]:
    """What the shell reads (typer's own formats: _completion_classes.py) and the exit status."""
    if shell == "bash":
        return "\n".join(names), 0
    if shell == "zsh":
        if not names:
            return "_files", 0

        def escape(s: str) -> str:
            return (s.replace('"', '""').replace("'", "''").replace("$", "\\$").replace("`", "\\`")
                    .replace(":", r"\\:"))

        shown = "\n".join(f'"{escape(name)}"' for name in names)
        return f"_arguments '*: :(({shown}))'", 0
    if env.get("_TYPER_COMPLETE_FISH_ACTION") == "is-args":
        return "", 0 if names else 1  # whether to offer arguments (names) rather than files; nothing printed
    return "\n".join(names), 0


def complete(env: Mapping[str, str] | None = None) -> int | None:
    """Answer a completion request for names and return the exit status, or None: typer answers it."""
    env = os.environ if env is None else env
    asked = request(env)
    if asked is None:
        return None
    shell, args, incomplete = asked
    kind = wanted(args, incomplete)
    if kind is None:
        return None
    names = job_names(env) if kind == "jobs" else cluster_names(env)
    if kind == "jobs" and args[0] in SWEEP_COMMANDS:
        names = sorted([*names, *sweep_names(env, names, incomplete)])
    names = [name for name in names if name.startswith(incomplete)]
    text, code = answer(shell, names, env)
    if not (shell == "fish" and env.get("_TYPER_COMPLETE_FISH_ACTION") == "is-args"):
        sys.stdout.write(text + "\n")  # typer echoes its answer, with a newline, even an empty one
    sys.stdout.flush()
    return code
