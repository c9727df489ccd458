"""What every site adapter does the same way over HTTP: one client per fixed address, one try.

A client built here follows no redirect, reads no proxy or netrc from the environment and never
retries at the transport: a request that makes a job is sent once, and a lost answer leaves a lost
order. An answer is either an ``httpx.Response`` or a short text saying why none came.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from dunscaith.domain.model.strict_json import loads_bounded


def fixed_client(base_url: str, headers: Mapping[str, str], timeout: float) -> httpx.Client:
    return httpx.Client(
        base_url=base_url,
        headers=dict(headers),
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
        transport=httpx.HTTPTransport(retries=0),
    )


def send(client: httpx.Client, method: str, path: str, **kwargs: Any) -> httpx.Response | str:
    """One request, never retried; the text of the failure when no whole answer came."""
    try:
        return client.request(method, path, **kwargs)
    except httpx.HTTPError as exc:
        return f"no answer ({type(exc).__name__})"


def describe(response: httpx.Response) -> str:
    if response.is_redirect:
        return f"HTTP {response.status_code} redirect, not followed"
    return f"HTTP {response.status_code} {response.reason_phrase}".strip()


def json_or_none(response: httpx.Response) -> Any:
    try:
        return loads_bounded(response.content)  # a body nested 200,000 deep is malformed, not a RecursionError
    except ValueError:
        return None


def same_address(a: str, b: str) -> bool:
    """Whether two base addresses are the same place (case of scheme and host, a trailing slash)."""
    left, right = httpx.URL(a.rstrip("/") + "/"), httpx.URL(b.rstrip("/") + "/")
    return (left.scheme, left.host, left.port, left.path) == (right.scheme, right.host, right.port, right.path)
