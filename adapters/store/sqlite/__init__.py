"""The embedded job store: one SQLite file in the record root, migrated by alembic on open."""

# What this store declares of its records, read where it is registered (entrypoints/dunscaith/store_kinds.py):
# they are one host's own (a file under the record root), so a job recorded here is reached on that host.
SHARED_BY_LOGIN_NODES = False
# The store's file in the record root (store.DB_FILE), named here so that whether a store was made can be
# asked without importing the store (entrypoints/dunscaith/read_root.py, sqlite_store_exists).
STORE_FILE = "records.db"
