"""What every site adapter does the same way over HTTP: one client per fixed address, one try.

A client built here follows no redirect, reads no proxy or netrc from the environment and never
retries at the transport: a request that makes a job is sent once, and a lost answer leaves a lost
order. An answer is either an ``httpx.Response`` or a ``NoAnswer`` saying why none came and whether
the request may have been written (the line between "not sent" and "a job may exist").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from dunscaith.domain.model.qdevices.answers import (
    JobAnswer,
    JobRequestAnswer,
    NoAnswer,
    ReadKind,
    classify_job_answer,
    classify_read,
    job_answer_without_reply,
)
from dunscaith.domain.model.strict_json import loads_bounded

# The httpx failures raised before the first byte of a request is written: the name was not resolved,
# the connection was refused or had no route, it or its TLS handshake timed out (ConnectTimeout), or no
# pooled connection came (PoolTimeout). Every other failure (WriteError, WriteTimeout, ReadError,
# ReadTimeout, RemoteProtocolError, ...) comes after it: the request may have reached the site.
NEVER_WRITTEN: tuple[type[httpx.HTTPError], ...] = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def fixed_client(base_url: str, headers: Mapping[str, str], timeout: float) -> httpx.Client:
    return httpx.Client(
        base_url=base_url,
        headers=dict(headers),
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        transport=httpx.HTTPTransport(retries=0),
    )


def send(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response | NoAnswer:
    """One request, never retried; when no whole answer came, why, and whether it may have been written."""
    try:
        return client.request(method, path, **kwargs)
    except NEVER_WRITTEN as exc:
        why = " ".join(str(exc).split()) or "no detail"
        return NoAnswer(False, f"not sent: nothing left the machine ({type(exc).__name__}: {why})")
    except httpx.HTTPError as exc:
        return NoAnswer(True, f"no answer ({type(exc).__name__})")


def describe(response: httpx.Response) -> str:
    if response.is_redirect:
        return f"HTTP {response.status_code} redirect, not followed"
    return f"HTTP {response.status_code} {response.reason_phrase}".strip()


def json_or_none(response: httpx.Response | NoAnswer) -> Any:
    if isinstance(response, NoAnswer):
        return None
    try:
        return loads_bounded(response.content)  # a body nested 200,000 deep is malformed, not a RecursionError
    except ValueError:
        return None


def job_answer(
    response: httpx.Response | NoAnswer,
    refusals: frozenset[int],
    job: str | None,
    no_job: str,
    problem: Callable[[httpx.Response], str] = describe,
) -> JobRequestAnswer:
    """The answer to a job request, as the seed's table reads it. ``job``: what a good answer's body gave
    (None when it gave none, or not as it should); ``no_job`` follows the status of a success that did not;
    ``problem`` says what a failure's answer says."""
    if isinstance(response, NoAnswer):
        return JobRequestAnswer(job_answer_without_reply(response), None, None, response.detail)
    kind = classify_job_answer(response.status_code, refusals, job is not None)
    if kind is not JobAnswer.OK:
        detail = problem(response) if not response.is_success else f"{describe(response)}{no_job}"
        return JobRequestAnswer(kind, None, response.status_code, detail)
    return JobRequestAnswer(JobAnswer.OK, job, response.status_code)


def read_failure(
    response: httpx.Response | NoAnswer,
    well_formed: bool,
    malformed: str,
    problem: Callable[[httpx.Response], str] = describe,
) -> tuple[ReadKind, str] | None:
    """Why a read of a job's state or result is not good (its kind, and why: the status, or ``malformed``
    after it for a success whose body does not say), as ``classify_read`` tells; None for a good one."""
    if isinstance(response, NoAnswer):
        return ReadKind.MISSED, response.detail
    kind = classify_read(response.status_code, well_formed)
    if kind is ReadKind.GOOD:
        return None
    return kind, problem(response) if not response.is_success else f"{describe(response)}{malformed}"


def same_address(a: str, b: str) -> bool:
    """Whether two base addresses are the same place (case of scheme and host, a trailing slash)."""
    left, right = httpx.URL(a.rstrip("/") + "/"), httpx.URL(b.rstrip("/") + "/")
    return (left.scheme, left.host, left.port, left.path) == (right.scheme, right.host, right.port, right.path)
