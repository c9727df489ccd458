"""``dunscaith config show / path``: the effective settings, and where each one came from."""

from __future__ import annotations

import json
import os
import tomllib
from typing import Any

import typer

from dunscaith.entrypoints.cli_support import finish_help, new_app
from dunscaith.entrypoints.dunscaith import edge
from dunscaith.entrypoints.dunscaith.forwarding_root import default_transport
from dunscaith.entrypoints.dunscaith.help_text import CONFIG_EXAMPLES, CONFIG_EXIT_CODES
from dunscaith.entrypoints.dunscaith.root.settings import config_file
from dunscaith.entrypoints.dunscaith.root.wiring import shown_records_url

# What a records.url with a password in it is told (every command that opens the store refuses it).
PASSWORD_BELONGS = ("a password in records.url is refused: put it in ~/.pgpass, "
                    "or in the file records.password_file names (mode 0600)")

app: typer.Typer = new_app("The configuration: where it is read from, and what is in effect.")


def _leaves(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    if isinstance(value, dict) and value:
        return [leaf for key, inner in value.items() for leaf in _leaves(inner, (*prefix, str(key)))]
    return [(prefix, value)]


def _in_file(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True


@app.command("show")
def show(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="one JSON object")) -> int:
    """Every setting in effect, with where it came from: default, the file, or a DUNSCAITH_ variable."""
    effective = edge.validated(edge.settings(ctx)).model_dump(mode="json")
    path = config_file()
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        data = {}
    rows = []
    for keys, value in _leaves(effective):
        variable = "DUNSCAITH_" + "__".join(k.upper() for k in keys)
        source = (f"environment {variable}" if variable in os.environ
                  else f"file {path}" if _in_file(data, keys) else "default")
        if keys == ("forwarding", "transport") and value is None:  # what is in effect, not "unset"
            value = default_transport()
            source = f"default: {'an ssh client is installed' if value == 'openssh' else 'no ssh client found'}"
        if keys == ("scheduler_state", "root") and value is None:  # where that state is: records.root's
            value, source = effective["records"]["root"], "default: records.root"
        if keys == ("records", "url") and isinstance(value, str) and shown_records_url(value) != value:
            value = shown_records_url(value)  # no secret in any output: the password masked, and where it belongs
            source += f"; {PASSWORD_BELONGS}"
        rows.append({"setting": ".".join(keys), "value": value, "source": source})
    if as_json:
        print(json.dumps({"file": str(path), "settings": rows}, indent=2))
        return 0
    width = max(len(r["setting"]) for r in rows)
    for r in rows:
        print(f"{r['setting']:<{width}}  {json.dumps(r['value'])}  ({r['source']})")
    return 0


@app.command("path")
def path(as_json: bool = typer.Option(False, "--json", help="one JSON object")) -> int:
    """The configuration file read (whether it exists or not)."""
    found = config_file()
    if as_json:
        print(json.dumps({"file": str(found), "exists": found.is_file()}))
    else:
        print(found)
    return 0



finish_help(app, CONFIG_EXAMPLES, CONFIG_EXIT_CODES)


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="config")
