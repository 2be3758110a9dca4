"""the store-wide change counter (issue 22 item 2): ``store_change``, one row (``id`` 1) whose ``n``
moves whenever a write can change what recall answers, read with one primary-key lookup
(:mod:`memtui.store.changes`).

Database triggers move it, so every writer -- any code path, any process -- moves it in the same
transaction as its change: an insert or delete of ``memory``, ``evidence``, ``repository`` or
``store_setting`` rows, an update of those tables, except an update of ``memory`` that sets only
``last_used_at`` (what recording a recall writes). SQLite: a trigger per row. PostgreSQL: a deferred
constraint trigger per row that bumps once per transaction, at commit (so the one row is locked only
while a writer commits, after every other lock it takes: no deadlock, and short waits).

Each move adds a random step (modulo 2**62 - 1), so the value always changes and never comes back
in practice: a store restored from a backup and then changed otherwise, or emptied and refilled,
does not meet a value a reader kept for other contents. It starts at a random value in [1, 2**62)
and a deleted row is inserted again at one.

Revision ID: 0012
Revises: 0011
"""
from alembic import op
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

#: every column of ``memory`` at this revision but ``last_used_at`` (a later column needs its own trigger)
MEMORY_COLUMNS = (
    'memory_id', 'logical_memory_id', 'type', 'statement', 'tenant_id', 'repository_id', 'module_path',
    'applies_to', 'does_not_apply_to', 'state', 'confidence', 'review_state', 'conflict_state', 'impact',
    'origin', 'proposer_type', 'proposer_id', 'failure_class', 'failure_type', 'promotion_status',
    'requires_human_review', 'root_cause_summary', 'verification_probe', 'source_action_ids', 'tags',
    'invalidation_policy', 'created_at', 'last_validated_at', 'expires_at', 'expires_after_days',
    'review_after_days', 'superseded_by', 'import_hash', 'import_source', 'content_hash', 'version',
)
TABLES = ('memory', 'evidence', 'repository', 'store_setting')
# values in [1, M], M = 2**62 - 1; a step adds r in [0, M - 2] modulo M, then 1: never the same value
_RANDOM_SQLITE = "(random() & 4611686018427387903) % 4611686018427387903 + 1"
_STEP_SQLITE = "n = (n + (random() & 4611686018427387903) % 4611686018427387902) % 4611686018427387903 + 1"
_RANDOM_PG = "floor(random() * 4611686018427387903)::bigint + 1"
_STEP_PG = ("n = (store_change.n + floor(random() * 4611686018427387902)::bigint) % 4611686018427387903 + 1")


def _events(table: str) -> list[tuple[str, str]]:
    """(trigger name suffix, event clause) for ``table``."""
    update = f"UPDATE OF {', '.join(MEMORY_COLUMNS)}" if table == 'memory' else "UPDATE"
    return [("ins", "INSERT"), ("upd", update), ("del", "DELETE")]


def upgrade() -> None:
    op.create_table(
        'store_change',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column('n', sa.BigInteger(), nullable=False),
    )
    conn = op.get_bind()
    postgres = conn.dialect.name == 'postgresql'
    conn.execute(sa.text(f"INSERT INTO store_change (id, n) VALUES (1, {_RANDOM_PG if postgres else _RANDOM_SQLITE})"))
    if postgres:
        conn.execute(sa.text(f"""
            CREATE FUNCTION memtui_store_changed() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF current_setting('memtui.store_changed', true) IS DISTINCT FROM '1' THEN
                INSERT INTO store_change (id, n) VALUES (1, {_RANDOM_PG})
                  ON CONFLICT (id) DO UPDATE SET {_STEP_PG};
                PERFORM set_config('memtui.store_changed', '1', true);
              END IF;
              RETURN NULL;
            END $$"""))
        for table in TABLES:
            for suffix, event in _events(table):
                conn.execute(sa.text(
                    f"CREATE CONSTRAINT TRIGGER store_change_{table}_{suffix} AFTER {event} ON {table} "
                    "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION memtui_store_changed()"))
        return
    for table in TABLES:
        for suffix, event in _events(table):
            conn.execute(sa.text(
                f"CREATE TRIGGER store_change_{table}_{suffix} AFTER {event} ON {table} BEGIN "
                f"INSERT INTO store_change (id, n) VALUES (1, {_RANDOM_SQLITE}) "
                f"ON CONFLICT (id) DO UPDATE SET {_STEP_SQLITE}; END"))


def downgrade() -> None:
    conn = op.get_bind()
    for table in TABLES:
        for suffix, _event in _events(table):
            if conn.dialect.name == 'postgresql':
                conn.execute(sa.text(f"DROP TRIGGER IF EXISTS store_change_{table}_{suffix} ON {table}"))
            else:
                conn.execute(sa.text(f"DROP TRIGGER IF EXISTS store_change_{table}_{suffix}"))
    if conn.dialect.name == 'postgresql':
        conn.execute(sa.text("DROP FUNCTION IF EXISTS memtui_store_changed()"))
    op.drop_table('store_change')
