"""The host's side of forwarding, started without typer or the job machinery.

``dunscaith _forwarded TOKEN`` is on the path of every forwarded command; going through the whole CLI
would add its imports (~0.2 s) to each. The command is also registered (hidden) in the app, which this
path bypasses only when the argv is exactly that.
"""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("dunscaith")
    except PackageNotFoundError:
        return "0+unknown"


def own_binary() -> str:
    script = Path(sys.executable).parent / "dunscaith"
    return str(script) if script.is_file() else os.path.abspath(sys.argv[0])


def serve(token: str) -> int:
    from adapters.process.forwarded_side import ForwardedSide

    return ForwardedSide(token, own_binary(), version(), os.environ, pwd.getpwuid(os.geteuid()).pw_name)()


def main(token: str) -> None:
    try:
        code = serve(token)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:  # one line, as every dunscaith error; nothing of the token is printed
        print(f"dunscaith: internal error on the forwarded side: {type(exc).__name__}: {exc}", file=sys.stderr)
        code = 3
    sys.exit(code)
