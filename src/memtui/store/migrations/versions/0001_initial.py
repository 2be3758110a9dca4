"""initial store: memory, evidence, state history, repository

Revision ID: 0001
Revises: 
Create Date: 2026-11-30 13:41:30.688023
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('memory',
    sa.Column('memory_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('logical_memory_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('type', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
    sa.Column('statement', sa.Text(), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('repository_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('module_path', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('applies_to', sa.JSON(), nullable=False),
    sa.Column('does_not_apply_to', sa.JSON(), nullable=False),
    sa.Column('state', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('confidence', sa.Float(), nullable=False),
    sa.Column('review_state', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('conflict_state', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('impact', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('proposer_type', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=True),
    sa.Column('proposer_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('failure_class', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=True),
    sa.Column('failure_type', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('promotion_status', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=True),
    sa.Column('requires_human_review', sa.Boolean(), nullable=False),
    sa.Column('root_cause_summary', sa.Text(), nullable=True),
    sa.Column('verification_probe', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('source_action_ids', sa.JSON(), nullable=False),
    sa.Column('tags', sa.JSON(), nullable=False),
    sa.Column('invalidation_policy', sa.JSON(), nullable=False),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.Column('last_validated_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    sa.Column('last_used_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    sa.Column('expires_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
    sa.Column('expires_after_days', sa.Integer(), nullable=True),
    sa.Column('review_after_days', sa.Integer(), nullable=True),
    sa.Column('superseded_by', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('import_hash', sqlmodel.sql.sqltypes.AutoString(length=80), nullable=True),
    sa.Column('import_source', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('memory_id')
    )
    with op.batch_alter_table('memory', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_memory_logical_memory_id'), ['logical_memory_id'], unique=False)
        batch_op.create_index('ix_memory_repository_state', ['repository_id', 'state'], unique=False)
        batch_op.create_index('ix_memory_state_id', ['state', 'memory_id'], unique=False)

    op.create_table('repository',
    sa.Column('repository_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('tenant_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('checkout_path', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('added_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.PrimaryKeyConstraint('repository_id')
    )
    op.create_table('evidence',
    sa.Column('evidence_id', sa.Integer(), nullable=False),
    sa.Column('memory_id', sa.String(length=200), nullable=False),
    sa.Column('ordinal', sa.Integer(), nullable=False),
    sa.Column('type', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('repository_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('path', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('commit_sha', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('line_start', sa.Integer(), nullable=True),
    sa.Column('line_end', sa.Integer(), nullable=True),
    sa.Column('symbol', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('target', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('ref', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('span_hash', sqlmodel.sql.sqltypes.AutoString(length=100), nullable=True),
    sa.Column('excerpt', sa.Text(), nullable=True),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.ForeignKeyConstraint(['memory_id'], ['memory.memory_id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('evidence_id')
    )
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_evidence_memory_id'), ['memory_id'], unique=False)

    op.create_table('memory_state_history',
    sa.Column('event_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('memory_id', sa.String(length=200), nullable=False),
    sa.Column('from_state', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=True),
    sa.Column('to_state', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('reason', sa.Text(), nullable=False),
    sa.Column('comment', sa.Text(), nullable=True),
    sa.Column('actor_type', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
    sa.Column('actor_id', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('actor_role', sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True),
    sa.Column('job_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('compensates', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('review_state_before', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=True),
    sa.Column('created_at', sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
    sa.ForeignKeyConstraint(['memory_id'], ['memory.memory_id'], ),
    sa.PrimaryKeyConstraint('event_id')
    )
    with op.batch_alter_table('memory_state_history', schema=None) as batch_op:
        batch_op.create_index('ix_history_memory_event', ['memory_id', 'event_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('memory_state_history', schema=None) as batch_op:
        batch_op.drop_index('ix_history_memory_event')

    op.drop_table('memory_state_history')
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_evidence_memory_id'))

    op.drop_table('evidence')
    op.drop_table('repository')
    with op.batch_alter_table('memory', schema=None) as batch_op:
        batch_op.drop_index('ix_memory_state_id')
        batch_op.drop_index('ix_memory_repository_state')
        batch_op.drop_index(batch_op.f('ix_memory_logical_memory_id'))

    op.drop_table('memory')
