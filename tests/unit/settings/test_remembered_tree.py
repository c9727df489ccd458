"""The settings every command's parts are made from (``edge.command_settings``): load_settings' tree,
remembered, read back as plain data (settings_view.py) with every key as the model reads it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.dunscaith import recovery_rules
from dunscaith.entrypoints.dunscaith.root import settings_cache, settings_view
from dunscaith.entrypoints.dunscaith.root.settings import DunscaithSettings, load_settings


def _clean(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for name in [n for n in os.environ if n.startswith(("DUNSCAITH_", "XDG_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))


def _values(model: Any, view: Any, place: str = "") -> list[str]:
    """Every key of the validated tree read through the plain view, as the model reads it: where they differ."""
    differ = []
    for name in type(model).model_fields:
        ours, theirs = getattr(model, name), getattr(view, name)
        if hasattr(type(ours), "model_fields"):
            differ += _values(ours, theirs, f"{place}{name}.")
            differ += [] if ours.model_fields_set == theirs.model_fields_set else [f"{place}{name} (given)"]
        elif name == "clusters" and not place:
            assert set(ours) == set(theirs)
            differ += [d for c in ours for d in _values(ours[c], theirs[c], f"{place}clusters.{c}.")]
        elif ours != theirs or type(ours) is not type(theirs):
            differ.append(f"{place}{name}: {ours!r} != {theirs!r}")
    return differ


def test_the_plain_settings_are_the_validated_tree_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _clean(monkeypatch, tmp_path)
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__POLL", "0.7")
    monkeypatch.setenv("DUNSCAITH_SUPERVISE__EXIT_CODE", "job")
    monkeypatch.setenv("DUNSCAITH_RECOVERY__ATTEMPTS", "5")
    monkeypatch.setenv("DUNSCAITH_ESCALATIONS__COMMAND", '["notify", "-x"]')
    monkeypatch.setenv("DUNSCAITH_RESIDUAL__POLICY", "manual")
    monkeypatch.setenv("DUNSCAITH_FORWARDING__SSH_CONFIG", "~/ssh_config")
    (tmp_path / ".config" / "dunscaith").mkdir(parents=True)
    (tmp_path / ".config" / "dunscaith" / "config.toml").write_text(
        '[clusters.big]\nadapter = "slurm"\nbin_dir = "/opt/slurm/bin"\nenv = { A = "1" }\n'
        "[clusters.big.recovery]\nrequeue_on_time_limit = 2\n")
    full = load_settings()
    first, found = settings_cache.plain_settings(), settings_cache.plain_settings()  # validated, then remembered
    assert isinstance(first, DunscaithSettings) and isinstance(found, settings_view.Settings)
    assert _values(full, found) == []  # every key, a path as a path, a mapping as a mapping, what was given
    assert found.cluster("big").env == {"A": "1"} and found.forwarding.ssh_config == tmp_path / "ssh_config"
    for cluster in ("big", "local"):
        assert recovery_rules.recovery_for(found, cluster) == recovery_rules.recovery_for(full, cluster)
    with pytest.raises(BadInput) as refused:
        found.cluster("nowhere")
    with pytest.raises(BadInput) as by_load:
        full.cluster("nowhere")
    assert str(refused.value) == str(by_load.value)  # load_settings' own refusal, word for word


def test_a_remembered_tree_not_ours_is_validated_again(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    settings_cache.remember("k1", DunscaithSettings.model_validate({"supervise": {"poll": 0.5}}), env)
    found = settings_cache.read_cached("k1", env)
    assert found is not None and found.supervise.poll == 0.5 and found.supervise.model_fields_set == {"poll"}
    assert settings_cache.read_cached("k2", env) is None
    path = settings_cache.cache_file(env)
    obj = json.loads(path.read_text())
    damaged: dict[str, Any]
    for damaged in ({"shape": {"paths": [["records", "nowhere"]], "tables": []}}, {"whole": []},
                    {"shape": {"paths": [[1]], "tables": []}}, {"shape": None}, {"tree": "x"}):
        path.write_text(json.dumps({**obj, **damaged}))
        assert settings_cache.read_cached("k1", env) is None  # damaged or not ours: validated again
    path.write_text(json.dumps({**obj, "format": 1}))  # an older dunscaith's answer
    assert settings_cache.read_cached("k1", env) is None
