"""``read_pipeline``: the pipeline file and its ``each`` files read from disk (relative to the file's
folder), every failure to read them one line naming the file, and the step for an ``each`` file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dunscaith.entrypoints.cli_support import BadInput
from dunscaith.entrypoints.pipeline_file import read_pipeline

STUDY = """name = "study"
[[step]]
name = "train"
command = "python train.py --lr {lr}"
each = "rates.txt"
[[step]]
name = "reduce"
command = "python reduce.py"
after = ["train"]
"""


def refusal(path: Path, name: str | None = None) -> str:
    with pytest.raises(BadInput) as caught:
        read_pipeline(path, name)
    line = str(caught.value)
    assert "\n" not in line
    return line


def test_each_is_read_relative_to_the_pipeline_files_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "study.toml").write_text(STUDY)
    (tmp_path / "p" / "rates.txt").write_text("lr=0.1\nlr=0.01\n")
    monkeypatch.chdir(tmp_path)  # not the file's folder: the each file is found beside the pipeline file
    pipeline = read_pipeline(Path("p/study.toml"), "s2")
    assert pipeline.name == "s2" and pipeline.complete
    train = pipeline.step("train")
    assert train.elements is not None and [e.values for e in train.elements] == [(("lr", "0.1"),), (("lr", "0.01"),)]


def test_a_refusal_of_the_text_names_the_file_as_given(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(STUDY.replace('after = ["train"]', 'after = ["trian"]'))
    assert refusal(path) == f'{path}: step "reduce": after: no step named "trian" (did you mean "train"?)'


def test_a_missing_each_file_names_the_step(tmp_path: Path) -> None:
    path = tmp_path / "study.toml"
    path.write_text(STUDY)
    assert refusal(path) == f'{path}: step "train": each rates.txt: No such file or directory'


def test_what_is_not_a_readable_text_file_is_refused_in_one_line(tmp_path: Path) -> None:
    assert refusal(tmp_path / "none.toml") == f"{tmp_path}/none.toml: No such file or directory"
    assert refusal(tmp_path) == f"{tmp_path}: a directory"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert refusal(fifo) == f"{fifo}: not a regular file (a pipe, a device...)"  # never waited on
    binary = tmp_path / "b.toml"
    binary.write_bytes(b'name = "\xff"\n')
    assert refusal(binary) == f"{binary}: not UTF-8 text (byte 8)"
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (1024 * 1024 + 1))
    assert refusal(big) == f"{big}: larger than 1 MiB; a pipeline file is a few KiB of TOML"
