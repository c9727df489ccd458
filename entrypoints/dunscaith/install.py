"""This dunscaith install: the absolute path of its console script, which a pointer names (seed 000: ``ssh
host dunscaith`` fails wherever PATH is set only by a login profile) and the forwarded side compares a
worker's ``argv[0]`` with. Standard library only: the lean paths use it."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def own_binary() -> str:
    script = Path(sys.executable).parent / "dunscaith"
    return str(script) if script.is_file() else os.path.abspath(sys.argv[0])
