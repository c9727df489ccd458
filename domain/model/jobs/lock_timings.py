"""The one rule between the two ends of a shared store's session (docs/record-backing.md "Timings").

A holder cut off from the server learns it lost the job's lock within its detection time; the server
frees a silent holder's lock after its release time. The release must come strictly later, or the
server could give the lock to another host while the first still believes it holds it.
"""

from __future__ import annotations


class UnsoundLockTimings(ValueError):
    """The release time does not exceed the detection time; the message names both, as given."""


def require_release_after_detection(release: float, detection: float, *, release_name: str = "the release time",
                                    detection_name: str = "the detection time") -> None:
    """Refuse timings under which the server could free a lock before its holder can know it lost it."""
    if release <= detection:
        raise UnsoundLockTimings(
            f"{release_name} ({release:g} s) must exceed {detection_name} ({detection:g} s): the server must "
            "not free a lock before its holder can know it lost it")
