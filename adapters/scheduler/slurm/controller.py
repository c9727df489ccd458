"""Where a cluster's controller is, as its ``slurm.conf`` says: for the lines that name what is not answering.

Read from the file itself (``SLURM_CONF``, else Slurm's default), never by asking the controller, which
is what may not answer. A client given a ``SLURM_CONF`` that does not exist does not fail: it looks for
the file again every second for 60 s, then fails; that is said up front instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_CONF = "/etc/slurm/slurm.conf"
_LINE = re.compile(r"^\s*(SlurmctldHost|ControlMachine|ControlAddr|SlurmctldPort)\s*=\s*(\S+)", re.IGNORECASE)
_MAX_READ = 1 << 20


@dataclass(frozen=True, slots=True)
class Controller:
    conf: str  # the slurm.conf the clients read
    conf_problem: str  # "" when the file is there and readable, else why not
    hosts: tuple[str, ...] = ()  # SlurmctldHost values, primary first ("vm(127.0.0.1)")
    port: str = "6817"

    def words(self) -> str:
        """``the controller at vm(127.0.0.1):6817``, ``the controller of /etc/slurm/slurm.conf``."""
        return f"the controller at {self.hosts[0]}:{self.port}" if self.hosts else f"the controller of {self.conf}"

    def conf_words(self) -> str:
        """Why the clients cannot read their configuration: they then look for it for 60 s, then fail."""
        return (f"the cluster's slurm.conf {self.conf} cannot be read ({self.conf_problem}): the Slurm clients "
                "look for it for 60 s, then fail; check SLURM_CONF in the cluster's env")

    def waiting(self, call: str, waited: float, timeout: float) -> str:
        """The line said while ``call`` waits."""
        if self.conf_problem:
            return f"waiting for {call} (no answer for {waited:g} s; timeout {timeout:g} s): {self.conf_words()}"
        return f"waiting for {call} ({self.words()} has not answered for {waited:g} s; timeout {timeout:g} s)"


def controller(env: Mapping[str, str]) -> Controller:
    """The controller the Slurm clients will ask, with ``env`` (the cluster's environment) in force."""
    conf = env.get("SLURM_CONF") or DEFAULT_CONF
    try:
        with open(conf, encoding="utf-8", errors="replace") as f:
            text = f.read(_MAX_READ)
    except FileNotFoundError:
        return Controller(conf, "no such file")
    except IsADirectoryError:
        return Controller(conf, "a directory, not a file")
    except OSError as exc:
        return Controller(conf, (exc.strerror or str(exc)).lower())
    hosts: list[str] = []
    port = "6817"
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        key, value = match.group(1).lower(), match.group(2)
        if key in ("slurmctldhost", "controlmachine"):
            hosts.append(value)
        elif key == "slurmctldport":
            port = value
    return Controller(conf, "", tuple(hosts), port)


def cluster_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment a Slurm client runs with: this process's, the cluster's ``env`` over it."""
    return {**os.environ, **extra}
