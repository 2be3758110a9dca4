"""maintenance: jobs, revalidation results, usage and harm events, evidence at HEAD

Revision ID: 0002
Revises: 0001
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.add_column(sa.Column('current_path', _str(), nullable=True))
        batch_op.add_column(sa.Column('current_line_start', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('current_line_end', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('current_commit', _str(length=64), nullable=True))
        batch_op.add_column(sa.Column('reason_code', _str(length=60), nullable=True))
        batch_op.add_column(sa.Column('status_reason', sa.Text(), nullable=True))
        batch_op.create_index('ix_evidence_commit_path', ['commit_sha', 'path'], unique=False)

    op.create_table('memory_maintenance_jobs',
        sa.Column('job_id', _str(length=64), nullable=False),
        sa.Column('job_type', _str(length=40), nullable=False),
        sa.Column('status', _str(length=20), nullable=False),
        sa.Column('repository_id', _str(length=200), nullable=True),
        sa.Column('selected_count', sa.Integer(), nullable=False),
        sa.Column('updated_count', sa.Integer(), nullable=False),
        sa.Column('dry_run', sa.Boolean(), nullable=False),
        sa.Column('clock', _time(), nullable=True),
        sa.Column('summary', sa.JSON(), nullable=False),
        sa.Column('started_at', _time(), nullable=False),
        sa.Column('completed_at', _time(), nullable=True),
        sa.PrimaryKeyConstraint('job_id'),
    )
    op.create_table('memory_revalidation',
        sa.Column('memory_id', sa.String(length=200), nullable=False),
        sa.Column('job_id', _str(length=64), nullable=False),
        sa.Column('status', _str(length=40), nullable=False),
        sa.Column('severity', _str(length=20), nullable=False),
        sa.Column('reasons', sa.JSON(), nullable=False),
        sa.Column('reason_codes', sa.JSON(), nullable=False),
        sa.Column('current_evidence', sa.JSON(), nullable=False),
        sa.Column('recommended_action', _str(length=40), nullable=False),
        sa.Column('checked_at', _time(), nullable=False),
        sa.ForeignKeyConstraint(['memory_id'], ['memory.memory_id']),
        sa.PrimaryKeyConstraint('memory_id'),
    )
    op.create_table('memory_usage_events',
        sa.Column('usage_id', _str(length=64), nullable=False),
        sa.Column('memory_id', sa.String(length=200), nullable=False),
        sa.Column('workflow_run_id', _str(length=200), nullable=True),
        sa.Column('context_pack_id', _str(length=200), nullable=True),
        sa.Column('usage_type', _str(length=40), nullable=False),
        sa.Column('outcome', _str(length=20), nullable=False),
        sa.Column('detail', sa.JSON(), nullable=False),
        sa.Column('created_at', _time(), nullable=False),
        sa.ForeignKeyConstraint(['memory_id'], ['memory.memory_id']),
        sa.PrimaryKeyConstraint('usage_id'),
    )
    op.create_index('ix_memory_usage_events_memory_id', 'memory_usage_events', ['memory_id'])
    op.create_table('memory_harm_events',
        sa.Column('harm_id', _str(length=64), nullable=False),
        sa.Column('memory_id', sa.String(length=200), nullable=False),
        sa.Column('issue', sa.Text(), nullable=False),
        sa.Column('action', _str(length=40), nullable=False),
        sa.Column('created_at', _time(), nullable=False),
        sa.ForeignKeyConstraint(['memory_id'], ['memory.memory_id']),
        sa.PrimaryKeyConstraint('harm_id'),
    )
    op.create_index('ix_memory_harm_events_memory_id', 'memory_harm_events', ['memory_id'])


def downgrade() -> None:
    op.drop_index('ix_memory_harm_events_memory_id', table_name='memory_harm_events')
    op.drop_table('memory_harm_events')
    op.drop_index('ix_memory_usage_events_memory_id', table_name='memory_usage_events')
    op.drop_table('memory_usage_events')
    op.drop_table('memory_revalidation')
    op.drop_table('memory_maintenance_jobs')
    with op.batch_alter_table('evidence', schema=None) as batch_op:
        batch_op.drop_index('ix_evidence_commit_path')
        for col in ('status_reason', 'reason_code', 'current_commit', 'current_line_end',
                    'current_line_start', 'current_path'):
            batch_op.drop_column(col)
