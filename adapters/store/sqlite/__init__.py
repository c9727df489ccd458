"""The embedded job store: one SQLite file in the record root, migrated by alembic on open."""

# What this store declares of its records, read where it is registered (entrypoints/dunscaith/store_kinds.py):
# they are one host's own (a file under the record root), so a job recorded here is reached on that host.
SHARED_BY_LOGIN_NODES = False
# The files a record root holds once this store was opened there (the root's HOST, record_root.py, then
# the store's own, store.DB_FILE): a root with neither has nothing recorded (a login node where nothing was
# ever submitted), and a command that only looks a name up, or lists, need not make them.
STORE_FILES = ("HOST", "records.db")
