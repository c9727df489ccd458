"""The quantum sites qdevices knows: their names, token variables, job steps and refusals."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class SiteName(StrEnum):
    MQSS = "mqss"
    VLQ = "vlq"
    PIASTQ = "piastq"


class Step(StrEnum):
    """One request of a metered job. A one-step site only has CREATE, which is the whole job."""

    CREATE = "create"
    UPLOAD = "upload"
    SUBMIT = "submit"


@dataclass(frozen=True, slots=True)
class SiteTraits:
    token_variable: str
    steps: tuple[Step, ...]
    needs_init_job: bool
    # HTTP statuses that mean "no job ran" for a job request at this site (its site page).
    refusal_statuses: frozenset[int]
    has_job_list: bool
    # Statuses that are refusals for one step only (VLQ: a 403 of CreateJob, a 400 of SubmitJob).
    step_refusals: Mapping[Step, frozenset[int]] = field(default_factory=dict)
    # Where a person finds a lost order's job, for the resolve hint.
    job_list_hint: str = ""
    # The longest job name the site keeps whole (None: the order's name always fits). A name cut by the
    # site would make two orders share one name in its job list, where a lost order is looked up.
    job_name_max: int | None = None

    def refusals(self, step: Step) -> frozenset[int]:
        return self.refusal_statuses | self.step_refusals.get(step, frozenset())


TRAITS: dict[SiteName, SiteTraits] = {
    SiteName.MQSS: SiteTraits("MQSS_TOKEN", (Step.CREATE,), False, frozenset({401, 403}), False,
                              job_list_hint="look for it in the Munich Quantum Portal"),
    # HEAppE (notes §1.4): 401, 413 and 429 are answered before any work, on every request. CreateJob
    # checks the specification and permissions before its insert (403, 404 "Validation Problem"); a 400
    # or 502 of CreateJob may come after the insert, so they are not refusals. SubmitJob's 400 (disabled
    # command template) comes before the scheduler call; its 404 "incorrect job state" means the job
    # already left Configuring, perhaps through a SubmitJob whose answer was lost: never a refusal.
    SiteName.VLQ: SiteTraits(
        "LEXIS_TOKEN", (Step.CREATE, Step.UPLOAD, Step.SUBMIT), True, frozenset({401, 413, 429}), True,
        step_refusals={Step.CREATE: frozenset({403, 404}), Step.SUBMIT: frozenset({400})},
        job_list_hint="find it with HEAppE's ListJobsForCurrentUser: its Name is the order's name",
        job_name_max=50,  # HEAppE's JobSpecification.Name: at most 50 characters (notes §1.4, CreateJob)
    ),
    SiteName.PIASTQ: SiteTraits("PCSS_API_KEY", (Step.CREATE,), False, frozenset({401, 403}), False,
                                job_list_hint="Piast-Q has no job list: ask PCSS"),
}

TOKEN_VARIABLES: tuple[str, ...] = tuple(t.token_variable for t in TRAITS.values())


def parse_site(text: str) -> SiteName:
    try:
        return SiteName(text)
    except ValueError:
        known = ", ".join(s.value for s in SiteName)
        raise ValueError(f"unknown site {text!r} (known: {known})") from None
