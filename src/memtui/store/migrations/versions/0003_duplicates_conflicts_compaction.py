"""duplicates, conflicts, compaction proposals and multi-memory review decisions

Revision ID: 0003
Revises: 0002
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    with op.batch_alter_table('memory_state_history', schema=None) as batch_op:
        batch_op.add_column(sa.Column('decision_id', _str(length=64), nullable=True))
    op.create_table('duplicate_cluster',
        sa.Column('cluster_id', _str(length=64), nullable=False),
        sa.Column('repository_id', _str(length=200), nullable=True),
        sa.Column('scope_key', sa.Text(), nullable=False),
        sa.Column('type', _str(length=80), nullable=False),
        sa.Column('members', sa.JSON(), nullable=False),
        sa.Column('canonical_id', _str(length=200), nullable=False),
        sa.Column('best_score', sa.Float(), nullable=False),
        sa.Column('scores', sa.JSON(), nullable=False),
        sa.Column('method', _str(length=20), nullable=False),
        sa.Column('explanation', sa.Text(), nullable=False),
        sa.Column('status', _str(length=20), nullable=False),
        sa.Column('job_id', _str(length=64), nullable=True),
        sa.Column('created_at', _time(), nullable=False),
        sa.Column('decided_at', _time(), nullable=True),
        sa.PrimaryKeyConstraint('cluster_id'),
    )
    op.create_table('not_duplicate_pair',
        sa.Column('memory_a', _str(length=200), nullable=False),
        sa.Column('memory_b', _str(length=200), nullable=False),
        sa.Column('actor_id', _str(length=200), nullable=False),
        sa.Column('decision_id', _str(length=64), nullable=True),
        sa.Column('created_at', _time(), nullable=False),
        sa.PrimaryKeyConstraint('memory_a', 'memory_b'),
    )
    op.create_table('memory_conflict',
        sa.Column('conflict_id', _str(length=64), nullable=False),
        sa.Column('severity', _str(length=20), nullable=False),
        sa.Column('tenant_id', _str(length=200), nullable=False),
        sa.Column('repository_id', _str(length=200), nullable=True),
        sa.Column('module_path', _str(), nullable=True),
        sa.Column('memory_a', _str(length=200), nullable=False),
        sa.Column('memory_b', _str(length=200), nullable=False),
        sa.Column('status', _str(length=20), nullable=False),
        sa.Column('action', _str(length=60), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('resolution', _str(length=40), nullable=True),
        sa.Column('resolved_by', _str(length=200), nullable=True),
        sa.Column('job_id', _str(length=64), nullable=True),
        sa.Column('created_at', _time(), nullable=False),
        sa.Column('resolved_at', _time(), nullable=True),
        sa.PrimaryKeyConstraint('conflict_id'),
    )
    op.create_index('ix_memory_conflict_memory_a', 'memory_conflict', ['memory_a'])
    op.create_index('ix_memory_conflict_memory_b', 'memory_conflict', ['memory_b'])
    op.create_table('compaction_proposal',
        sa.Column('proposal_id', _str(length=64), nullable=False),
        sa.Column('tenant_id', _str(length=200), nullable=False),
        sa.Column('repository_id', _str(length=200), nullable=True),
        sa.Column('module_path', _str(), nullable=True),
        sa.Column('members', sa.JSON(), nullable=False),
        sa.Column('proposed_statement', sa.Text(), nullable=False),
        sa.Column('proposed_type', _str(length=80), nullable=False),
        sa.Column('shared', sa.JSON(), nullable=False),
        sa.Column('broadens_scope', sa.Boolean(), nullable=False),
        sa.Column('status', _str(length=20), nullable=False),
        sa.Column('new_memory_id', _str(length=200), nullable=True),
        sa.Column('job_id', _str(length=64), nullable=True),
        sa.Column('created_at', _time(), nullable=False),
        sa.Column('decided_at', _time(), nullable=True),
        sa.Column('decided_by', _str(length=200), nullable=True),
        sa.PrimaryKeyConstraint('proposal_id'),
    )
    op.create_table('review_decision',
        sa.Column('decision_id', _str(length=64), nullable=False),
        sa.Column('kind', _str(length=40), nullable=False),
        sa.Column('subject_id', _str(length=64), nullable=False),
        sa.Column('action', _str(length=40), nullable=False),
        sa.Column('actor_id', _str(length=200), nullable=False),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('undone_by', _str(length=64), nullable=True),
        sa.Column('created_at', _time(), nullable=False),
        sa.PrimaryKeyConstraint('decision_id'),
    )


def downgrade() -> None:
    op.drop_table('review_decision')
    op.drop_table('compaction_proposal')
    op.drop_index('ix_memory_conflict_memory_b', table_name='memory_conflict')
    op.drop_index('ix_memory_conflict_memory_a', table_name='memory_conflict')
    op.drop_table('memory_conflict')
    op.drop_table('not_duplicate_pair')
    op.drop_table('duplicate_cluster')
    with op.batch_alter_table('memory_state_history', schema=None) as batch_op:
        batch_op.drop_column('decision_id')
