"""What the SQL stores (SQLite, PostgreSQL) share: the tables, and the one alembic history that makes them."""
