"""The shared job store: one PostgreSQL database for every login node, its per-job lock a session advisory lock."""

# What this store declares of its records, read where it is registered (entrypoints/dunscaith/store_kinds.py):
# every login node opens the same database, so a job recorded here is reached from any of them.
SHARED_BY_LOGIN_NODES = True
