"""The store: SQLModel tables, engine, Alembic migrations and queries. SQLite by default, PostgreSQL for a team."""
