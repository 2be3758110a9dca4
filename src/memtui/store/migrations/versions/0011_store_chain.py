"""integrity over the whole store (issue 21 item 6): ``integrity_chain`` (the store-level chain:
one row per memory, reviewer, delegation or token sealed by a transaction, each linked to the
store's previous row by a hash, keyed when ``MEMTUI_INTEGRITY_KEY`` is set) and ``integrity_head``
(one row: the latest sequence number and hash, so removing the last rows is found). A store that
already holds memories, reviewers or tokens is sealed once here
(:func:`memtui.governance.integrity.seal_store`).

Revision ID: 0011
Revises: 0010
"""
from alembic import op
import sqlalchemy as sa
import sqlmodel

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None

_str = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        'integrity_chain',
        sa.Column('seq', sa.BigInteger(), primary_key=True, autoincrement=False),
        sa.Column('kind', _str(length=20), nullable=False),
        sa.Column('subject', sa.Text(), nullable=False),
        sa.Column('digest', _str(length=200), nullable=True),
        sa.Column('prev_hash', _str(length=64), nullable=False),
        sa.Column('hash', _str(length=64), nullable=False),
    )
    op.create_index('ix_integrity_chain_subject', 'integrity_chain', ['kind', 'subject', 'seq'])
    op.create_table(
        'integrity_head',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column('seq', sa.BigInteger(), nullable=False),
        sa.Column('last_hash', _str(length=64), nullable=False),
        sa.Column('keyed', sa.Boolean(), nullable=False),
        sa.Column('key_check', _str(length=64), nullable=True),
        sa.Column('mac', _str(length=64), nullable=False),
    )
    conn = op.get_bind()
    if any(conn.execute(sa.text(f"SELECT 1 FROM {t} LIMIT 1")).first()
           for t in ('memory', 'reviewer', 'reviewer_delegation', 'api_token')):
        # a store from an earlier version: sealed once, as it is (keyed when a key is set)
        from memtui.governance.integrity import integrity_key, seal_store

        seal_store(conn, integrity_key())


def downgrade() -> None:
    op.drop_table('integrity_head')
    op.drop_table('integrity_chain')
