"""The host's ledger of Grid Engine jobs (what Grid Engine forgets): nonces, and deletes before a start."""

from __future__ import annotations

from pathlib import Path

from dunscaith.adapters.scheduler.gridengine.ledger import Entry, Ledger


def test_what_one_process_wrote_another_reads_and_a_later_word_completes_an_entry(tmp_path: Path) -> None:
    Ledger(tmp_path).put(Entry("5", "train", "n-1", 1000, cwd="/w"))
    Ledger(tmp_path).put(Entry("5", "train", None, 1000, deleted=1010.0))  # the delete keeps the nonce
    [entry] = Ledger(tmp_path).named({"train"})
    assert (entry.nonce, entry.deleted, entry.cwd) == ("n-1", 1010.0, "/w")
    assert Ledger(tmp_path).named({"other"}) == []


def test_ids_repeat_after_a_qmaster_restart_so_an_id_has_its_entries_newest_first(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    ledger.put(Entry("1", "old", "n-old", 1000))
    ledger.put(Entry("1", "new", "n-new", 2000))
    assert [e.nonce for e in Ledger(tmp_path).of("1")] == ["n-new", "n-old"]
    assert Ledger(tmp_path).of("1.3") == []  # a task's id is its own


def test_without_a_folder_it_is_this_process_memory(tmp_path: Path) -> None:
    ledger = Ledger(None)
    ledger.put(Entry("7.2", "s-2", "n", None, deleted=1.0))
    assert [e.object_id for e in ledger.named({"s-2"})] == ["7.2"]
    assert list(tmp_path.iterdir()) == []
