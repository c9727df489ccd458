"""The embedded job store: one SQLite file in the record root, migrated by alembic on open."""

# The store's file in the record root (store.DB_FILE), named here so that whether a store was made can be
# asked without importing the store (entrypoints/dunscaith/root/wiring.py, store_exists).
STORE_FILE = "records.db"
