"""A process that releases one local object and may die or pause at a durable step of the release.

``python -m tests.integration.local_scheduler.releaser ROOT OBJECT_ID [--kill-at STEP]
[--pause-at STEP --go FILE] [--linger]``. STEP is a checkpoint name of ``LocalScheduler``
("released", "start-decided", "spawned"). It prints ``at STEP`` when it reaches a step, so a test
can wait for it, and ``done`` when the release returned.
"""

from __future__ import annotations

import argparse
import os
import signal
import time
from pathlib import Path

from dunscaith.adapters.scheduler.local import LocalScheduler
from dunscaith.domain.model.jobs.ids import ObjectId


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("object_id")
    parser.add_argument("--kill-at")
    parser.add_argument("--pause-at")
    parser.add_argument("--go", type=Path)
    parser.add_argument("--linger", action="store_true", help="stay alive after the release until killed")
    args = parser.parse_args()

    def checkpoint(step: str) -> None:
        print(f"at {step}", flush=True)
        if step == args.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if step == args.pause_at:
            while not args.go.exists():
                time.sleep(0.02)

    LocalScheduler(args.root, checkpoint=checkpoint).release(ObjectId(args.object_id))
    print("done", flush=True)
    if args.linger:
        while True:
            time.sleep(60)


if __name__ == "__main__":
    main()
