"""The quantum sites qdevices knows: their names, token variables, job steps and refusals."""

from __future__ import annotations

from dataclasses import dataclass
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


TRAITS: dict[SiteName, SiteTraits] = {
    SiteName.MQSS: SiteTraits("MQSS_TOKEN", (Step.CREATE,), False, frozenset({401, 403}), False),
    SiteName.VLQ: SiteTraits(
        "LEXIS_TOKEN", (Step.CREATE, Step.UPLOAD, Step.SUBMIT), True, frozenset({401, 413, 429}), True
    ),
    SiteName.PIASTQ: SiteTraits("PCSS_API_KEY", (Step.CREATE,), False, frozenset({401, 403}), False),
}

TOKEN_VARIABLES: tuple[str, ...] = tuple(t.token_variable for t in TRAITS.values())


def parse_site(text: str) -> SiteName:
    try:
        return SiteName(text)
    except ValueError:
        known = ", ".join(s.value for s in SiteName)
        raise ValueError(f"unknown site {text!r} (known: {known})") from None
