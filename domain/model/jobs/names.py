"""The rule for a name dunscaith makes files and scheduler objects of: a job's, a cluster's.

A cluster's name is a folder under the record root (``slurm-queries/<cluster>``) and travels in
requests, as a job's name does, so both follow one rule: no separator, no dot-only name, nothing a
shell or a scheduler would read as syntax.
"""

from __future__ import annotations

import re

from dunscaith.domain.model.shown import shown

# A name every scheduler accepts and every filesystem stores: it names the job's objects and files.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")
NAME_RULE = "use 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit"


def name_problem(what: str, name: str) -> str | None:
    """One line saying why ``name`` breaks the rule (shown shortened: it may be long), or None."""
    if NAME.fullmatch(name):
        return None
    return f"{what} {shown(name)}: {NAME_RULE}"


def pipeline_candidate(job: str, sweep: str | None = None) -> str | None:
    """The pipeline a job's name could be a step of: NAME of ``NAME.STEP`` (or of an element's sweep
    ``NAME.STEP``); None when the name has no '.' (a step's own name has none). Only a guess from the name:
    what the jobs recorded (their first event's ``pipeline``) says whether it is one."""
    whole = sweep if sweep is not None else job
    name, dot, step = whole.rpartition(".")
    return name if dot and name and step else None
