"""A run's manifest: its site and device, its orders, its rules file and limits.

The TOML text is parsed outside; this module takes the parsed mapping and refuses anything it does
not understand exactly, with one line naming the problem.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dunscaith.domain.model.qdevices.errors import QdevicesError
from dunscaith.domain.model.qdevices.sites import TRAITS, SiteName, parse_site


class ManifestError(QdevicesError, ValueError):
    """The manifest cannot be used; the message names the problem."""


NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
# What a manifest and one order's circuit file may weigh (docs/qdevices/manifests-and-records.md): far
# above any real one; a larger file, or one that is no regular file (/dev/zero, a FIFO), is refused unread.
MAX_MANIFEST_BYTES = 1 << 20
MAX_CIRCUIT_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class OrderSpec:
    index: int  # 1-based, the order's number in the run
    name: str
    circuit: str  # path of an OpenQASM file, as written in the manifest
    shots: int


@dataclass(frozen=True, slots=True)
class Limits:
    job_seconds_limit: int  # device seconds a job may take; a lost or open order counts this much
    budget_seconds: int  # upper bound of device seconds over every record of the site
    wait_seconds: int  # how long one call waits for one job's result
    max_shots: int


@dataclass(frozen=True, slots=True)
class Manifest:
    run: str
    site: SiteName
    device: str
    orders: tuple[OrderSpec, ...]
    limits: Limits
    rules: str | None  # path of a Python rules file, as written
    project: str | None = None  # VLQ: the LEXIS project (short name) the jobs are charged to


    def order(self, index: int) -> OrderSpec:
        return self.orders[index - 1]


_TOP = {"name", "site", "device", "rules", "limits", "orders", "project"}
_LIMITS = {"job_seconds_limit": None, "budget_seconds": None, "wait_seconds": 3600, "max_shots": 100_000}
_ORDER = {"name", "circuit", "shots"}


def _int(value: Any, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ManifestError(f"{where} must be a whole number, not {value!r}")
    if value < minimum:
        raise ManifestError(f"{where} must be at least {minimum}, not {value}")
    return value


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ManifestError(f"{where} must be a non-empty string")
    return value


def _name(value: Any, where: str) -> str:
    text = _str(value, where)
    if not NAME_PATTERN.fullmatch(text):
        raise ManifestError(f"{where} {text!r}: use letters, digits, '.', '_', '-' (at most 64, not first)")
    return text


def _unknown(keys: Any, allowed: set[str] | dict[str, Any], where: str) -> None:
    extra = sorted(set(keys) - set(allowed))
    if extra:
        raise ManifestError(f"{where}: unknown key(s) {', '.join(extra)}")


def parse_manifest(data: Mapping[str, Any], default_name: str) -> Manifest:
    _unknown(data.keys(), _TOP, "manifest")
    for key in ("site", "device", "limits", "orders"):
        if key not in data:
            raise ManifestError(f"manifest: missing {key}")
    try:
        site = parse_site(_str(data["site"], "site"))
    except ValueError as exc:
        raise ManifestError(f"manifest: {exc}") from None
    device = _str(data["device"], "device")
    run = _name(data.get("name", default_name), "name")
    rules = _str(data["rules"], "rules") if "rules" in data else None
    project = _project(data, site)
    limits = _limits(data["limits"])
    return Manifest(run, site, device, _orders(data["orders"], site, limits), limits, rules, project)


def _project(data: Mapping[str, Any], site: SiteName) -> str | None:
    project = _name(data["project"], "project") if "project" in data else None
    if site is SiteName.VLQ and project is None:
        raise ManifestError("manifest: missing project (VLQ: the LEXIS project short name the jobs are charged to)")
    if site is not SiteName.VLQ and project is not None:
        raise ManifestError(f"manifest: project is for site vlq only, not {site.value}")
    return project


def _limits(raw_limits: Any) -> Limits:
    if not isinstance(raw_limits, Mapping):
        raise ManifestError("limits must be a table")
    _unknown(raw_limits.keys(), _LIMITS, "limits")
    values: dict[str, int] = {}
    for key, default in _LIMITS.items():
        if key not in raw_limits:
            if default is None:
                raise ManifestError(f"limits: missing {key}")
            values[key] = default
        else:
            values[key] = _int(raw_limits[key], f"limits.{key}")
    return Limits(**values)


def _orders(raw_orders: Any, site: SiteName, limits: Limits) -> tuple[OrderSpec, ...]:
    if not isinstance(raw_orders, list) or not raw_orders:
        raise ManifestError("orders must be a non-empty list of [[orders]] tables")
    orders: list[OrderSpec] = []
    seen: set[str] = set()
    for number, raw in enumerate(raw_orders, start=1):
        orders.append(_order(number, raw, site, limits, seen))
    return tuple(orders)


def _order(number: int, raw: Any, site: SiteName, limits: Limits, seen: set[str]) -> OrderSpec:
    """One [[orders]] table; ``seen``: the names of the orders before it (this one's is added)."""
    where = f"order {number}"
    if not isinstance(raw, Mapping):
        raise ManifestError(f"{where} must be a table")
    _unknown(raw.keys(), _ORDER, where)
    for key in sorted(_ORDER):
        if key not in raw:
            raise ManifestError(f"{where}: missing {key}")
    name = _name(raw["name"], f"{where} name")
    longest = TRAITS[site].job_name_max
    if longest is not None and len(name) > longest:
        raise ManifestError(f"{where} name {name[:20]!r}…: {len(name)} characters; {site.value} keeps a job's name "
                            f"whole up to {longest}, and a lost order is found at the site by its name")
    if name in seen:
        raise ManifestError(f"{where}: the name {name!r} is used twice")
    seen.add(name)
    shots = _int(raw["shots"], f"{where} shots")
    if shots > limits.max_shots:
        raise ManifestError(f"{where} ({name}): {shots} shots is more than limits.max_shots {limits.max_shots}")
    return OrderSpec(number, name, _str(raw["circuit"], f"{where} circuit"), shots)


def check_circuit(text: str, where: str) -> None:
    """An order's circuit must be OpenQASM text: refuse anything else before a request is made."""
    head = text.lstrip("\ufeff \t\r\n")
    while head.startswith("//"):
        head = head.split("\n", 1)[1].lstrip() if "\n" in head else ""
    if not head.startswith("OPENQASM"):
        raise ManifestError(f"{where}: not an OpenQASM circuit (it must begin with 'OPENQASM')")
