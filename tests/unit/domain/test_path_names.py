"""path_names (the wrapper's names, without pathlib) gives exactly what pathlib gives."""

from __future__ import annotations

import itertools
from pathlib import Path, PurePosixPath

from dunscaith.domain.model.path_names import absolute, normalized, parent

ATOMS = ["", "/", "//", "///", ".", "..", "a", "b", "./", "a/", "/a", "//a", "a//b", "./a", "../", "x/."]


def test_every_short_name_as_pathlib_writes_it(tmp_path: Path) -> None:
    for size in range(1, 5):
        for atoms in itertools.product(ATOMS, repeat=size):
            text = "".join(atoms)
            pure = PurePosixPath(text)
            assert normalized(text) == str(pure), text
            assert parent(text) == str(pure.parent), text
            if text:
                assert absolute(text, str(tmp_path)) == str(tmp_path / text), text
                assert absolute(text, "/") == str(Path("/") / text), text
