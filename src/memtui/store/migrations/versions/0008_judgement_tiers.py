"""two tiers of judgement (issue 20): a conflict's score and the statements it was judged on, a
dismissed duplicate pair's statements, and the pluggable judge's cached verdicts

``memory_conflict.status`` gains ``possible`` (a ranked suggestion: holds nothing out of recall);
``score`` is P(conflict) in [0, 1]; ``pair_hash`` the sha256 of both statements when the pair was
judged or dismissed, so a dismissal lasts until either statement changes. ``duplicate_cluster.status``
gains ``possible`` likewise. ``judge_verdict`` caches the judge's answer per pair content, model and
prompt version.

Revision ID: 0008
Revises: 0007
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    with op.batch_alter_table('memory_conflict') as batch:
        batch.add_column(sa.Column('score', sa.Float(), nullable=True))
        batch.add_column(sa.Column('pair_hash', _str(length=64), nullable=True))
    with op.batch_alter_table('not_duplicate_pair') as batch:
        batch.add_column(sa.Column('pair_hash', _str(length=64), nullable=True))
    op.create_index('ix_memory_conflict_status', 'memory_conflict', ['status'])
    op.create_table(
        'judge_verdict',
        sa.Column('cache_key', _str(length=64), primary_key=True),
        sa.Column('model', _str(length=200), nullable=False),
        sa.Column('verdict', _str(length=20), nullable=False),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('created_at', _time(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table('judge_verdict')
    op.drop_index('ix_memory_conflict_status', 'memory_conflict')
    with op.batch_alter_table('not_duplicate_pair') as batch:
        batch.drop_column('pair_hash')
    with op.batch_alter_table('memory_conflict') as batch:
        batch.drop_column('pair_hash')
        batch.drop_column('score')
