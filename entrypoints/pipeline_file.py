"""Reading a pipeline file and its ``each`` files for ``submit --pipeline FILE`` (docs/pipelines.md).

The reading only: a regular file, at most a bounded size, UTF-8. What the text means, and every refusal
of it, is the domain's (domain/model/jobs/pipelines.py). An ``each`` file is named relative to the
pipeline file's folder (an absolute name as it is). Every refusal is one ``BadInput`` line naming the file.

Not wired yet: ``submit --pipeline`` is the entrypoints' restructuring's to add; it calls ``read_pipeline``.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from dunscaith.domain.model.jobs.errors import BadSpec
from dunscaith.domain.model.jobs.pipelines import PipelineSpec, parse_pipeline, with_elements
from dunscaith.domain.model.jobs.sweeps import MAX_ELEMENTS
from dunscaith.domain.model.shown import escaped
from dunscaith.entrypoints.cli_support import BadInput

PIPELINE_LIMIT = 1024 * 1024  # bytes of a pipeline file at most: a file of steps is a few KiB
EACH_LIMIT = 16 * 1024 * 1024  # as submit --each: 10,000 lines of arguments fit many times


def read_pipeline(path: Path, name: str | None = None) -> PipelineSpec:
    """The pipeline ``path`` describes, every ``each`` file read and checked with it; ``name`` is --name."""
    shown = escaped(str(path))
    text = _text(path, PIPELINE_LIMIT, shown, "a pipeline file is a few KiB of TOML")
    try:
        pipeline = parse_pipeline(text, str(path), name)
        texts = {}
        for each in pipeline.each_files():
            step = next(s.name for s in pipeline.steps if s.each == each)
            texts[each] = _text(
                path.parent / each,
                EACH_LIMIT,
                f'{shown}: step "{step}": each {escaped(each)}',
                f"a sweep has at most {MAX_ELEMENTS:,} elements, one a line",
            )
        return with_elements(pipeline, texts)
    except BadSpec as exc:
        raise BadInput(str(exc)) from None


def _text(path: Path, limit: int, shown: str, why: str) -> str:
    """A regular file's text (a FIFO, a device or a folder is refused, never waited on), at most ``limit``
    bytes of UTF-8, newlines as a text read gives them."""
    try:
        # O_NONBLOCK: opening a FIFO nobody writes to returns at once, and fstat then refuses it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise BadInput(f"{shown}: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a pipe, a device...)"
        raise BadInput(f"{shown}: {what}")
    with os.fdopen(fd, "rb") as file:
        os.set_blocking(fd, True)
        try:
            data = file.read(limit + 1)
        except OSError as exc:
            raise BadInput(f"{shown}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise BadInput(f"{shown}: larger than {limit // (1024 * 1024)} MiB; {why}")
    try:
        text = data.decode()
    except UnicodeDecodeError as exc:
        raise BadInput(f"{shown}: not UTF-8 text (byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")
