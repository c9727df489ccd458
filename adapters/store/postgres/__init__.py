"""The shared job store: one PostgreSQL database for every login node, its per-job lock a session advisory lock."""
