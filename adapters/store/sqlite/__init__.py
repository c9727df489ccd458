"""The embedded job store: one SQLite file in the record root, migrated by alembic on open."""
