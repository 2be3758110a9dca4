"""bearer tokens of the HTTP API, per reviewer and per agent (issue 12)

Revision ID: 0006
Revises: 0005
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString
_time = sqlmodel.sql.sqltypes.UTCDateTime


def upgrade() -> None:
    op.create_table(
        'api_token',
        sa.Column('token_id', _str(length=64), primary_key=True),
        sa.Column('name', _str(length=200), nullable=False),
        sa.Column('kind', _str(length=20), nullable=False),
        sa.Column('token_hash', sa.String(64), nullable=False, unique=True),
        sa.Column('created_by', _str(length=200), nullable=False),
        sa.Column('created_at', _time(), nullable=False),
        sa.Column('expires_at', _time(), nullable=True),
        sa.Column('revoked_at', _time(), nullable=True),
        sa.Column('revoked_by', _str(length=200), nullable=True),
        sa.Column('last_used_at', _time(), nullable=True),
    )
    op.create_index('ix_api_token_name', 'api_token', ['name'])


def downgrade() -> None:
    op.drop_index('ix_api_token_name', 'api_token')
    op.drop_table('api_token')
