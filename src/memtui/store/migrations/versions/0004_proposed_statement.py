"""revalidation proposes a statement edit when a named path moved (issue 8)

Revision ID: 0004
Revises: 0003
"""
from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('memory_revalidation', schema=None) as batch_op:
        batch_op.add_column(sa.Column('proposed_statement', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('memory_revalidation', schema=None) as batch_op:
        batch_op.drop_column('proposed_statement')
