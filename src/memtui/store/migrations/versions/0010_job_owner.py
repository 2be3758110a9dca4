"""the process that runs a maintenance job (issue 21 item 7): ``pid``, ``host`` and ``process_started``
(the process's start on its host, so a reused pid is told apart) on ``memory_maintenance_jobs``; a job
found ``running`` whose process is gone becomes ``abandoned``

Revision ID: 0010
Revises: 0009
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table('memory_maintenance_jobs') as batch:
        batch.add_column(sa.Column('pid', sa.Integer(), nullable=True))
        batch.add_column(sa.Column('host', _str(length=255), nullable=True))
        batch.add_column(sa.Column('process_started', _str(length=80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('memory_maintenance_jobs') as batch:
        batch.drop_column('process_started')
        batch.drop_column('host')
        batch.drop_column('pid')
