"""indexes for the queue's reason and actor filters at 1,000,000 memories (issue 22 item 8)

``reason=`` keeps memories with a piece of evidence carrying that revalidation reason code, ``actor=``
those with a history event by that actor; each is an ``EXISTS`` the planner turns into a semi-join,
which without an index reads the whole evidence or history table per queue state (a second at
1,000,000 memories for a reason or actor that matches nothing). ``evidence.reason_code`` is set only on
evidence revalidation found wanting, so its index is partial (``reason_code IS NOT NULL``).

Revision ID: 0013
Revises: 0012
"""
from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

_SET = sa.text("reason_code IS NOT NULL")


def upgrade() -> None:
    op.create_index('ix_evidence_reason_code', 'evidence', ['reason_code', 'memory_id'],
                    postgresql_where=_SET, sqlite_where=_SET)
    op.create_index('ix_history_actor_memory', 'memory_state_history', ['actor_id', 'memory_id'])


def downgrade() -> None:
    op.drop_index('ix_history_actor_memory', 'memory_state_history')
    op.drop_index('ix_evidence_reason_code', 'evidence')
