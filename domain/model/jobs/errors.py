"""The one root of the jobs context's errors, so the edge can catch one type.

Every error the jobs domain raises on purpose (a record that does not read, a spec or duration that
does not parse, a pointer that cannot be used, a record root that is refused) derives from JobsError.
Each keeps the base class callers caught before (ValueError for the parse errors), so nothing that
catches those breaks. Errors of the ports (StoreError, SchedulerError, ResidualError) are not the
domain's and stay outside this root.
"""

from __future__ import annotations


class JobsError(Exception):
    """A rule of the jobs domain refused something; the message says what, for the user."""


class BadSpec(JobsError, ValueError):
    """The job cannot be described as asked (no command, both a command and a script, a need no
    scheduler could honour, one this cluster's scheduler refuses...)."""
