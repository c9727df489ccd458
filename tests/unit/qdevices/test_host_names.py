"""Issue 22 item 15: `unlock --host NAME` takes a host name only."""

from __future__ import annotations

import pytest

from dunscaith.domain.model.qdevices.host_names import host_name_problem


@pytest.mark.parametrize("name", ["../../x", "..", "a/b", "", " login", "a..b", "-a", "a-", "a" * 254, "x\ny",
                                  "a" * 64 + ".b", "x;y", "ünï"])
def test_what_is_not_a_host_name_is_refused(name: str) -> None:
    problem = host_name_problem(name)
    assert problem is not None and "\n" not in problem


@pytest.mark.parametrize("name", ["login2", "login-2.cluster.example.org", "node_07", "h1.", "a" * 63, "10.0.0.7"])
def test_host_names_pass(name: str) -> None:
    assert host_name_problem(name) is None
