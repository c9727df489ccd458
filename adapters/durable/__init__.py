"""Durable-file primitives shared by every adapter that writes a record, a control file or a lock.

This is the one package all adapters may import (the import-linter contract puts it below them):
it is not a technology of its own but the disk discipline the promise rests on.
"""
