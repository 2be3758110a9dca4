"""safety and governance (issue 9): reviewers, audit log, secret findings, store settings,
hash-chained history, memory content hash, review claims

Revision ID: 0005
Revises: 0004
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    op.create_table(
        'reviewer',
        sa.Column('name', sa.String(200), primary_key=True),
        sa.Column('role', sa.String(20), nullable=False),
        sa.Column('scopes', sa.JSON(), nullable=False),
        sa.Column('added_by', sa.String(200), nullable=False),
        sa.Column('added_at', _time(), nullable=False),
    )
    op.create_table(
        'audit_event',
        sa.Column('audit_id', sa.String(64), primary_key=True),
        sa.Column('kind', sa.String(40), nullable=False),
        sa.Column('actor_id', sa.String(200), nullable=False),
        sa.Column('subject', sa.Text(), nullable=True),
        sa.Column('detail', sa.JSON(), nullable=False),
        sa.Column('created_at', _time(), nullable=False),
    )
    op.create_index('ix_audit_kind_subject', 'audit_event', ['kind', 'subject'])
    op.create_table(
        'secret_finding',
        sa.Column('finding_id', sa.String(64), primary_key=True),
        sa.Column('memory_id', sa.String(200), nullable=False, index=True),
        sa.Column('field', sa.String(80), nullable=False),
        sa.Column('secret_type', sa.String(80), nullable=False),
        sa.Column('secret_hash', sa.String(64), nullable=False),
        sa.Column('scanner_version', sa.String(80), nullable=False),
        sa.Column('job_id', sa.String(64), nullable=True),
        sa.Column('found_at', _time(), nullable=False),
    )
    op.create_table(
        'store_setting',
        sa.Column('key', sa.String(80), primary_key=True),
        sa.Column('value', sa.Text(), nullable=False),
    )
    op.create_table(
        'review_claim',
        sa.Column('memory_id', sa.String(200), sa.ForeignKey('memory.memory_id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('claimed_by', sa.String(200), nullable=False),
        sa.Column('claimed_at', _time(), nullable=False),
        sa.Column('expires_at', _time(), nullable=False),
    )
    with op.batch_alter_table('memory_state_history', schema=None) as batch_op:
        batch_op.add_column(sa.Column('prev_hash', sa.String(64), nullable=True))
        batch_op.add_column(sa.Column('event_hash', sa.String(64), nullable=True))
    with op.batch_alter_table('memory', schema=None) as batch_op:
        batch_op.add_column(sa.Column('content_hash', sa.String(64), nullable=True))
    _backfill_hashes(op.get_bind())


def _backfill_hashes(conn) -> None:
    """Chain the history a store already has (oldest event first, per memory) and seal each memory
    to its last event, so `memtui check` is clean on an upgraded store (issue 9)."""
    from memtui.domain.integrity import CONTENT_FIELDS, EVENT_FIELDS, content_hash, event_hash

    hist = sa.table('memory_state_history', *[sa.column(c) for c in EVENT_FIELDS if c != 'created_at'],
                    sa.column('created_at', sa.DateTime(timezone=True)), sa.column('prev_hash'),
                    sa.column('event_hash'))
    json_cols = ('applies_to', 'does_not_apply_to')
    mem = sa.table('memory', *[sa.column(c, sa.JSON() if c in json_cols else None) for c in CONTENT_FIELDS],
                   sa.column('content_hash'))
    ids = [r[0] for r in conn.execute(sa.select(mem.c.memory_id).order_by(mem.c.memory_id))]
    for i in range(0, len(ids), 1000):
        chunk = ids[i:i + 1000]
        heads: dict[str, str] = {}
        updates = []
        for e in conn.execute(sa.select(hist).where(hist.c.memory_id.in_(chunk))
                              .order_by(hist.c.memory_id, hist.c.event_id)).mappings():
            prev = heads.get(e['memory_id'], '')
            h = event_hash(prev, e)
            heads[e['memory_id']] = h
            updates.append({'eid': e['event_id'], 'prev': prev, 'h': h})
        if updates:
            conn.execute(hist.update().where(hist.c.event_id == sa.bindparam('eid'))
                         .values(prev_hash=sa.bindparam('prev'), event_hash=sa.bindparam('h')), updates)
        seals = [{'mid': m['memory_id'], 'c': content_hash(m, heads.get(m['memory_id']))}
                 for m in conn.execute(sa.select(mem).where(mem.c.memory_id.in_(chunk))).mappings()]
        if seals:
            conn.execute(mem.update().where(mem.c.memory_id == sa.bindparam('mid'))
                         .values(content_hash=sa.bindparam('c')), seals)


def downgrade() -> None:
    with op.batch_alter_table('memory', schema=None) as batch_op:
        batch_op.drop_column('content_hash')
    with op.batch_alter_table('memory_state_history', schema=None) as batch_op:
        batch_op.drop_column('event_hash')
        batch_op.drop_column('prev_hash')
    for t in ('review_claim', 'store_setting', 'secret_finding'):
        op.drop_table(t)
    op.drop_index('ix_audit_kind_subject', 'audit_event')
    op.drop_table('audit_event')
    op.drop_table('reviewer')
