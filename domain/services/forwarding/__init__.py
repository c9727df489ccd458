"""Use cases of forwarding a command to the host that owns a job's record, and of learning what became of it."""
