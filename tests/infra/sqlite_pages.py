"""Damage a SQLite record store where a test means to: the pages of the events, found by SQLite's dbstat.

A fixed offset damages whatever the schema happens to put there, and the layout moves with every table a
revision adds (the summaries of revision 0002 took the pages the events had at 8 KiB). ``dd`` at the
offsets this gives does what the tests say: a page of event data, or the event table's own pages.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def event_pages(db: Path, pagetype: str) -> list[int]:
    """The numbers of the ``events`` table's pages of ``pagetype`` ("leaf", "overflow", "internal")."""
    # immutable: no -wal or -shm made beside it (the store was closed, so its WAL is checkpointed)
    conn = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    try:
        rows = conn.execute("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = ? ORDER BY pageno",
                            (pagetype,)).fetchall()
    finally:
        conn.close()
    return [int(pageno) for (pageno,) in rows]


def page_size(db: Path) -> int:
    with open(db, "rb") as f:
        header = f.read(18)
    size = int.from_bytes(header[16:18], "big")
    return 65536 if size == 1 else size


def zero_pages(db: Path, pages: list[int]) -> None:
    """dd if=/dev/zero of=records.db bs=PAGE seek=N-1 count=1 conv=notrunc, for each page N."""
    size = page_size(db)
    with open(db, "r+b") as f:
        for page in pages:
            f.seek((page - 1) * size)
            f.write(b"\0" * size)


def drop_last_cells(db: Path, page: int, count: int) -> None:
    """Lower a table leaf page's cell count by ``count``: its last rows are lost without any error from
    SQLite (only quick_check sees the page's free space disagree), as a damaged page can lose them."""
    size = page_size(db)
    with open(db, "r+b") as f:
        f.seek((page - 1) * size + (100 if page == 1 else 0))
        header = f.read(5)
        cells = int.from_bytes(header[3:5], "big")
        assert header[0] in (0x0A, 0x0D) and cells > count, (header.hex(), count)  # a leaf, with rows left
        f.seek((page - 1) * size + (100 if page == 1 else 0) + 3)
        f.write((cells - count).to_bytes(2, "big"))
