"""full-text search of statements (issue 11, item 1): SQLite FTS5, PostgreSQL tsvector; memory.superseded_by indexed

The index on ``superseded_by`` serves the lineage lookup of every detail pane (a scan of 100,000
rows before); those on ``created_at`` and ``confidence`` the queue's age and confidence sorts.

SQLite: an FTS5 table ``memory_fts`` (memory_id, statement) kept in step with ``memory`` by
triggers, so every writer (import, edit, merge, purge) keeps it current. PostgreSQL: a stored
generated ``tsvector`` column with a GIN index (always current by construction). Both index
words with no stemming (unicode61 / 'simple') so a query finds the same memories on either.

Revision ID: 0007
Revises: 0006
"""
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

_SQLITE_UP = [
    "CREATE VIRTUAL TABLE memory_fts USING fts5(memory_id UNINDEXED, statement, "
    "tokenize='unicode61 remove_diacritics 2', prefix='2 3 4')",
    "INSERT INTO memory_fts(memory_id, statement) SELECT memory_id, statement FROM memory",
    "CREATE TRIGGER memory_fts_ai AFTER INSERT ON memory BEGIN "
    "INSERT INTO memory_fts(memory_id, statement) VALUES (new.memory_id, new.statement); END",
    "CREATE TRIGGER memory_fts_ad AFTER DELETE ON memory BEGIN "
    "DELETE FROM memory_fts WHERE memory_id = old.memory_id; END",
    "CREATE TRIGGER memory_fts_au AFTER UPDATE OF statement ON memory BEGIN "
    "DELETE FROM memory_fts WHERE memory_id = old.memory_id; "
    "INSERT INTO memory_fts(memory_id, statement) VALUES (new.memory_id, new.statement); END",
]
_SQLITE_DOWN = ["DROP TRIGGER IF EXISTS memory_fts_au", "DROP TRIGGER IF EXISTS memory_fts_ad",
                "DROP TRIGGER IF EXISTS memory_fts_ai", "DROP TABLE IF EXISTS memory_fts"]
_PG_UP = [
    "ALTER TABLE memory ADD COLUMN statement_tsv tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple', statement)) STORED",
    "CREATE INDEX ix_memory_statement_tsv ON memory USING gin (statement_tsv)",
]
_PG_DOWN = ["DROP INDEX IF EXISTS ix_memory_statement_tsv", "ALTER TABLE memory DROP COLUMN IF EXISTS statement_tsv"]


def _run(statements: list[str]) -> None:
    for sql in statements:
        op.execute(sql)


def upgrade() -> None:
    op.create_index('ix_memory_superseded_by', 'memory', ['superseded_by'])
    op.create_index('ix_memory_created_id', 'memory', ['created_at', 'memory_id'])
    op.create_index('ix_memory_confidence_id', 'memory', ['confidence', 'memory_id'])
    _run(_SQLITE_UP if op.get_bind().dialect.name == "sqlite" else _PG_UP)


def downgrade() -> None:
    _run(_SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else _PG_DOWN)
    for name in ('ix_memory_confidence_id', 'ix_memory_created_id', 'ix_memory_superseded_by'):
        op.drop_index(name, 'memory')
