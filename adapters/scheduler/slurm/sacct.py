"""``sacct``: what the accounting store remembers of jobs slurmctld has already forgotten.

Pitfalls of 22.05 handled here (../shared/notes/slurm-accounting.md): a name query with --starttime and
no --state skips jobs that never became eligible (held then cancelled), so the query is by end
state, and ``--state`` needs an explicit ``--endtime``; states read ``CANCELLED by 0``; names match
case-insensitively (MariaDB), so rows are kept only for exact names; the comment, last, may hold '|'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dunscaith.adapters.scheduler.slurm.config import clusters_args
from dunscaith.adapters.scheduler.slurm.states import object_state

ENDED_STATES = "CA,CD,F,TO,NF,OOM,DL,PR,BF"
FIELDS = "JobID,JobName,State,ExitCode,User,NodeList,Comment"
_N = 7


def sacct_args(names: Sequence[str], lookback_seconds: int, clusters: str | None) -> list[str]:
    return [
        "-X", "--parsable2", "--noheader", f"--format={FIELDS}", f"--name={','.join(names)}",
        f"--starttime=now-{max(1, lookback_seconds)}", "--endtime=now", f"--state={ENDED_STATES}",
        *clusters_args(clusters),
    ]


class SacctParseError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class SacctRow:
    job_id: str
    name: str
    slurm_state: str
    exit_code: str
    user: str
    node_list: str
    comment: str

    @property
    def started(self) -> bool:
        return self.node_list not in ("", "None assigned", "(null)")


def parse(stdout: str, names: Sequence[str]) -> list[SacctRow]:
    wanted = set(names)
    rows = []
    for line in stdout.split("\n"):  # not splitlines(): a comment may hold \x1c-\x1e
        if not line.strip():
            continue
        fields = line.split("|", _N - 1)
        if len(fields) != _N:
            raise SacctParseError(f"sacct line with {len(fields)} fields, not {_N}: {line[:80]!r}")
        job_id, name, state, exit_code, user, nodes, comment = fields
        if name not in wanted:  # --name matched case-insensitively
            continue
        object_state(state, "")
        rows.append(SacctRow(job_id.strip(), name, state.strip(), exit_code.strip(), user.strip(), nodes.strip(),
                             comment))
    return rows
