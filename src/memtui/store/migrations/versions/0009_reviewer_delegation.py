"""delegation between reviewers (issue 21 item 5): ``reviewer_delegation`` rows let the connection's
identity ``delegate`` act as the reviewer ``principal`` (``--actor principal``); granted by a lead

Revision ID: 0009
Revises: 0008
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    op.create_table(
        'reviewer_delegation',
        sa.Column('delegate', _str(length=200), primary_key=True),
        sa.Column('principal', _str(length=200), primary_key=True),
        sa.Column('granted_by', _str(length=200), nullable=False),
        sa.Column('granted_at', _time(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table('reviewer_delegation')
