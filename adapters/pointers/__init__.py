"""Pointers: where each job's record lives, readable from every login node (files and an in-memory fake)."""
