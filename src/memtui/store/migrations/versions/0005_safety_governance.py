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
