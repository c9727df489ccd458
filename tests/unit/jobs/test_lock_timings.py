"""The one rule of a shared store's lock timings: the server's release strictly after the holder's detection."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.jobs.lock_timings import UnsoundLockTimings, require_release_after_detection


def test_a_release_after_the_detection_is_accepted() -> None:
    require_release_after_detection(10.5, 10.0)


@pytest.mark.parametrize(("release", "detection"), [(10.0, 10.0), (5.0, 10.0)])
def test_a_release_not_after_the_detection_is_refused_naming_both(release: float, detection: float) -> None:
    with pytest.raises(UnsoundLockTimings, match=rf"^server \({release:g} s\) must exceed holder \({detection:g} s\)"):
        require_release_after_detection(release, detection, release_name="server", detection_name="holder")
