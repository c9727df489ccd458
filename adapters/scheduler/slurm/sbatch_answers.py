"""Every answer ``sbatch`` can give, classified ONCE: created, refused (proved no job), or unknown.

The rule (DESIGN §4a): only an answer that *proves* no job was made is a refusal. A timeout, a killed
client, a socket or protocol error, an answer we cannot parse or a message in neither table is
UNKNOWN, so the attempt is never resent and the held object, if one was made, is found by its nonce
or swept by name. Each row of these tables has its own test (tests/unit/slurm/test_sbatch_answers.py).

Messages are matched on stderr lines. The "may have reached the controller" table is checked first,
so a line that proves nothing always wins over a refusal line printed beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dunscaith.adapters.scheduler.create_answer import before_the_words, job_id_on_last_line
from dunscaith.domain.model.jobs.ids import ObjectId
from dunscaith.domain.model.jobs.objects import CreateAnswer, CreateOutcome


@dataclass(frozen=True, slots=True)
class AnswerRow:
    pattern: re.Pattern[str]
    outcome: CreateOutcome
    why: str
    example: str  # a real stderr line of this kind (Slurm 22.05), used by the row's test


def _row(pattern: str, outcome: CreateOutcome, why: str, example: str) -> AnswerRow:
    return AnswerRow(re.compile(pattern, re.IGNORECASE), outcome, why, example)


U, R = CreateOutcome.UNKNOWN, CreateOutcome.REFUSED
_FAILED = "sbatch: error: Batch job submission failed: "

# The request may have reached slurmctld and a job may exist: never a refusal.
MAY_HAVE_REACHED: tuple[AnswerRow, ...] = (
    _row(r"Socket timed out on send/recv operation", U, "the reply was lost; the job may exist",
         _FAILED + "Socket timed out on send/recv operation"),
    _row(r"Zero Bytes were transmitted or received", U, "the connection broke mid-request",
         _FAILED + "Zero Bytes were transmitted or received"),
    _row(r"Communication (send|receive) failure", U, "the connection broke mid-request",
         _FAILED + "Communication receive failure"),
    _row(r"Communication connection failure", U, "the connection broke mid-request",
         _FAILED + "Communication connection failure"),
    _row(r"Insane message length|Unexpected message received|Message receive failure", U,
         "the reply could not be read", _FAILED + "Unexpected message received"),
    _row(r"Resource temporarily unavailable", U, "a busy controller's answer, not a proof",
         _FAILED + "Resource temporarily unavailable"),
    # "(send failure)", "(receive failure)", "(shutdown failure)": a connection was made, the request
    # may have gone out on it
    _row(r"Unable to contact slurm controller \((?!connect failure)", U, "the connection broke mid-request",
         _FAILED + "Unable to contact slurm controller (send failure)"),
)

# sbatch's own checks of its options and script, made before it opens any connection (Slurm 22.05's
# getopt, slurm_opt.c and sbatch/opt.c): nothing was sent. Anchored on sbatch's own prefix (the program
# may be named by its path, as getopt prints argv[0]) so that no controller message relayed after
# "Batch job submission failed:" can match one of them.
_SBATCH = r"^(?:\S*/)?sbatch: "
_LOCAL = "sbatch refused it before contacting the controller"
LOCAL_REFUSALS: tuple[AnswerRow, ...] = (
    _row(_SBATCH + r"(?:unrecognized option|invalid option|option .* requires an argument|option requires an "
         r"argument|option .* doesn't allow an argument|option .* is ambiguous)", R, _LOCAL,
         "sbatch: unrecognized option '--bogus'"),
    _row(_SBATCH + r"(?:error|fatal): Invalid --[\w-]+ (?:specification|argument)", R, _LOCAL,
         "sbatch: error: Invalid --time specification"),
    _row(_SBATCH + r"(?:error|fatal): Invalid numeric value .* for --[\w-]+", R, _LOCAL,
         'sbatch: error: Invalid numeric value "0" for --cpus-per-task.'),
    _row(_SBATCH + r"(?:error|fatal): unrecognized --[\w-]+ argument", R, _LOCAL,
         'sbatch: error: unrecognized --hint argument "x", see --hint=help'),
    _row(_SBATCH + r"(?:error|fatal): invalid --[\w-]+=.* option", R, _LOCAL,
         "sbatch: error: invalid --profile=x option"),
    _row(_SBATCH + r"(?:error|fatal): --[\w-]+=.* is not valid", R, _LOCAL,
         "sbatch: error: --propagate=BOGUS is not valid."),
    _row(_SBATCH + r"(?:error|fatal): \".*\" is not a valid node count", R, _LOCAL,
         'sbatch: error: "abc" is not a valid node count'),
    _row(_SBATCH + r"(?:error|fatal): .* are mutually exclusive", R, _LOCAL,
         "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."),
    _row(_SBATCH + r"(?:error|fatal): Could not open user environment file", R, _LOCAL,
         "sbatch: error: Could not open user environment file /nonexistent"),
)

# Answers that prove no job was made: the client refused before sending, or slurmctld rejected it.
REFUSALS: tuple[AnswerRow, ...] = (
    _row(r"Invalid partition name specified|invalid partition specified", R, "no such partition",
         _FAILED + "Invalid partition name specified"),
    _row(r"Invalid account or account/partition combination specified", R, "account refused",
         _FAILED + "Invalid account or account/partition combination specified"),
    _row(r"More processors requested than permitted", R, "more CPUs than the partition allows",
         _FAILED + "More processors requested than permitted"),
    _row(r"Requested node configuration is not available", R, "no node can satisfy the request",
         _FAILED + "Requested node configuration is not available"),
    _row(r"Requested partition configuration not available now", R, "partition limits refuse it",
         _FAILED + "Requested partition configuration not available now"),
    _row(r"Invalid qos specification", R, "QOS refused", _FAILED + "Invalid qos specification"),
    _row(r"Job violates accounting/QOS policy", R, "a limit (e.g. per-user submit limit) refuses it",
         _FAILED + "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"),
    _row(r"Requested time limit is invalid", R, "time limit refused",
         _FAILED + "Requested time limit is invalid (missing or exceeds some limit)"),
    _row(r"Node count specification invalid", R, "node count refused", _FAILED + "Node count specification invalid"),
    _row(r"Invalid generic resource \(gres\) specification", R, "GRES refused",
         "sbatch: error: Invalid generic resource (gres) specification"),
    _row(r"Invalid Trackable RESource \(TRES\) specification", R, "TRES refused",
         _FAILED + "Invalid Trackable RESource (TRES) specification"),
    _row(r"Invalid feature specification", R, "constraint refused", _FAILED + "Invalid feature specification"),
    _row(r"Invalid node name specified", R, "node list refused", _FAILED + "Invalid node name specified"),
    _row(r"Requested reservation is invalid", R, "reservation refused", _FAILED + "Requested reservation is invalid"),
    _row(r"Invalid job array specification", R, "array refused", _FAILED + "Invalid job array specification"),
    _row(r"Pathname of a file, directory or other parameter too long", R,
         "slurmctld refused a value too long (a batch script above max_script_size)",
         _FAILED + "Pathname of a file, directory or other parameter too long"),
    _row(r"Memory required by task is not available", R, "memory refused",
         _FAILED + "Memory required by task is not available"),
    _row(r"Invalid wckey specification", R, "wckey refused", _FAILED + "Invalid wckey specification"),
    _row(r"Job dependency problem", R, "dependency refused", _FAILED + "Job dependency problem"),
    _row(r"Access/permission denied", R, "not allowed", _FAILED + "Access/permission denied"),
    _row(r"Invalid user id", R, "user refused", _FAILED + "Invalid user id"),
    _row(r"Protocol authentication error|Munge encode failed", R, "authentication failed; nothing was accepted",
         _FAILED + "Protocol authentication error"),
    # slurm_send_recv_controller_msg (src/common/slurm_protocol_api.c) goes on to the next SlurmctldHost
    # only after one answered that it is in standby (it did nothing), or again after a rate-limit or
    # reroute answer (nothing done either); "connect failure" is its answer when no controller then
    # accepted the connection: no request went out on any connection that was made and acted on.
    _row(r"Unable to contact slurm controller \(connect failure\)", R,
         "no controller accepted the connection, so nothing was sent",
         _FAILED + "Unable to contact slurm controller (connect failure)"),
    _row(r"Could not establish a configuration source", R, "no slurm.conf (set SLURM_CONF in the cluster's env)",
         "sbatch: fatal: Could not establish a configuration source"),
    _row(r"Batch script is empty", R, "sbatch refused locally", "sbatch: error: Batch script is empty!"),
    _row(r"This does not look like a batch script", R, "sbatch refused locally",
         "sbatch: error: This does not look like a batch script.  The first"),
    _row(r"Batch script contains DOS line breaks", R, "sbatch refused locally",
         "sbatch: error: Batch script contains DOS line breaks (\\r\\n)"),
    *LOCAL_REFUSALS,
)

_JOB_ID = re.compile(r"^(\d+)(?:_\d+)?(?:;\S+)?$")  # --parsable: "id" or "id;cluster"


def parse_job_id(stdout: str) -> ObjectId | None:
    return job_id_on_last_line(_JOB_ID, stdout)


def classify(
    returncode: int | None, stdout: str, stderr: str, *, timed_out: bool = False, spawn_error: str = ""
) -> CreateAnswer:
    """What one sbatch run says about the job it was asked to make."""
    job_id = parse_job_id(stdout)
    created = "" if job_id is None or returncode == 0 else _last_line(stderr)
    settled = before_the_words(
        "sbatch", returncode, job_id, timed_out=timed_out, spawn_error=spawn_error, created_detail=created
    )
    if settled is not None:
        return settled
    if returncode == 0:
        return CreateAnswer(CreateOutcome.UNKNOWN, detail=f"sbatch answered without a job id: {_last_line(stdout)!r}")
    lines = _said(stderr)
    for table in (MAY_HAVE_REACHED, REFUSALS):
        for row in table:
            if any(row.pattern.search(line) for line in lines):
                return CreateAnswer(row.outcome, detail=f"{_quoted(lines)} ({row.why})")
    return CreateAnswer(
        CreateOutcome.UNKNOWN,
        detail=f"sbatch exited with {returncode}, an answer not known to prove anything: {_quoted(lines)!r}",
    )


_HELP_HINT = re.compile(r'^Try "\S*sbatch --help" for more information$')
_PROGRAM_PATH = re.compile(r"^\S*/sbatch: ")
_MAX_QUOTED = 10  # lines: enough for every answer seen, bounded for one that floods stderr


def _said(stderr: str) -> list[str]:
    """sbatch's stderr lines that say something, its program path shortened to ``sbatch`` (getopt prints
    argv[0]), without getopt's "Try sbatch --help" hint."""
    lines = [_PROGRAM_PATH.sub("sbatch: ", ln.strip()) for ln in stderr.splitlines() if ln.strip()]
    return [ln for ln in lines if not _HELP_HINT.match(ln)]


def _quoted(lines: list[str]) -> str:
    """Every line that matters, in order: the reason is often split over two (a value, then the option)."""
    shown = lines[:_MAX_QUOTED] + ([f"... {len(lines) - _MAX_QUOTED} more lines"] if len(lines) > _MAX_QUOTED else [])
    return " / ".join(shown)


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1] if lines else ""
