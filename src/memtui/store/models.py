"""SQLModel tables of the store (seed 000 §5 memory record, §23 storage schema).

Column names are the snake_case forms of the design's camelCase fields. Timestamps are
timezone-aware datetimes stored as UTC (sqlmodel's UTCDateTime; naive values are refused). JSON columns hold lists.
Only :func:`memtui.review.lifecycle.transition` writes ``Memory.state``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel


class Repository(SQLModel, table=True):
    """A code repository memtui knows, with the checkout maintenance reads."""

    __tablename__ = "repository"

    repository_id: str = Field(primary_key=True, max_length=200)
    tenant_id: str = Field(default="default", max_length=200)
    checkout_path: Optional[str] = Field(default=None)
    added_at: datetime


_VERSION = sa.Column("version", sa.Integer, nullable=False, default=1)


class Memory(SQLModel, table=True):
    """One memory record (seed 000 §5) or candidate (§6.3, seed 003's promotion-gate candidate)."""

    __tablename__ = "memory"
    __table_args__ = (
        sa.Index("ix_memory_state_id", "state", "memory_id"),
        sa.Index("ix_memory_repository_state", "repository_id", "state"),
        sa.Index("ix_memory_superseded_by", "superseded_by"),  # lineage.sources_of, on every detail pane
        sa.Index("ix_memory_created_id", "created_at", "memory_id"),  # the queue sorted by age
        sa.Index("ix_memory_confidence_id", "confidence", "memory_id"),  # ... and by confidence
    )

    memory_id: str = Field(primary_key=True, max_length=200)
    logical_memory_id: str = Field(max_length=200, index=True)
    type: str = Field(max_length=80)
    statement: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    tenant_id: str = Field(default="default", max_length=200)
    repository_id: Optional[str] = Field(default=None, max_length=200)
    module_path: Optional[str] = Field(default=None)
    applies_to: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    does_not_apply_to: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    state: str = Field(max_length=40)
    confidence: float = 0.5
    review_state: str = Field(default="none", max_length=40)
    conflict_state: str = Field(default="none", max_length=40)
    impact: str = Field(default="normal", max_length=20)
    origin: str = Field(default="agent", max_length=40)
    proposer_type: Optional[str] = Field(default=None, max_length=80)
    proposer_id: Optional[str] = Field(default=None, max_length=200)
    failure_class: Optional[str] = Field(default=None, max_length=80)
    failure_type: Optional[str] = Field(default=None, max_length=200)
    promotion_status: Optional[str] = Field(default=None, max_length=80)
    requires_human_review: bool = False
    root_cause_summary: Optional[str] = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    verification_probe: Optional[str] = Field(default=None, max_length=200)
    source_action_ids: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    tags: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    invalidation_policy: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False)
    )
    created_at: datetime
    last_validated_at: Optional[datetime] = None
    last_used_at: Optional[datetime] = None
    expires_at: Optional[datetime] = None
    expires_after_days: Optional[int] = None
    review_after_days: Optional[int] = None
    superseded_by: Optional[str] = Field(default=None, max_length=200)
    import_hash: Optional[str] = Field(default=None, max_length=80)
    import_source: Optional[str] = Field(default=None)
    # sha256 of the statement and scope as of the last history event (issue 9, `memtui check`)
    content_hash: Optional[str] = Field(default=None, max_length=64)
    version: int = Field(default=1, sa_column=_VERSION)

    # optimistic concurrency: an UPDATE carries "WHERE version = <read>" and bumps it, so two
    # reviewers deciding the same memory on a shared PostgreSQL store cannot both win.
    __mapper_args__ = {"version_id_col": _VERSION}


class Evidence(SQLModel, table=True):
    """One piece of evidence of a memory: a file span at a commit, a symbol, a call edge, a doc, an ADR, a human source."""

    __tablename__ = "evidence"
    __table_args__ = (
        sa.Index("ix_evidence_commit_path", "commit_sha", "path"),
        sa.Index("ix_evidence_reason_code", "reason_code", "memory_id",  # the queue's reason= filter
                 postgresql_where=sa.text("reason_code IS NOT NULL"), sqlite_where=sa.text("reason_code IS NOT NULL")),
    )

    evidence_id: Optional[int] = Field(default=None, primary_key=True)
    memory_id: str = Field(
        sa_column=sa.Column(sa.String(200), sa.ForeignKey("memory.memory_id", ondelete="CASCADE"),
                            nullable=False, index=True)
    )
    ordinal: int = 0
    type: str = Field(max_length=40)
    repository_id: Optional[str] = Field(default=None, max_length=200)
    path: Optional[str] = Field(default=None)
    commit_sha: Optional[str] = Field(default=None, max_length=64)
    line_start: Optional[int] = None
    line_end: Optional[int] = None
    symbol: Optional[str] = Field(default=None)
    target: Optional[str] = Field(default=None)
    ref: Optional[str] = Field(default=None)
    span_hash: Optional[str] = Field(default=None, max_length=100)
    excerpt: Optional[str] = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    status: str = Field(default="unchecked", max_length=40)
    # where revalidation last found the evidence at HEAD; the recorded anchor above never moves
    current_path: Optional[str] = Field(default=None)
    current_line_start: Optional[int] = None
    current_line_end: Optional[int] = None
    current_commit: Optional[str] = Field(default=None, max_length=64)
    reason_code: Optional[str] = Field(default=None, max_length=60)
    status_reason: Optional[str] = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))


class StateHistory(SQLModel, table=True):
    """Append-only state-history event (seed 000 §23.1). Rows are never updated or deleted.

    ``event_id`` sorts in the order events were written. ``compensates`` names the event an
    undo reverses; ``job_id`` the maintenance job that made a system change.
    """

    __tablename__ = "memory_state_history"
    __table_args__ = (
        sa.Index("ix_history_memory_event", "memory_id", "event_id"),
        sa.Index("ix_history_actor_memory", "actor_id", "memory_id"),  # the queue's actor= filter
    )

    event_id: str = Field(primary_key=True, max_length=64)
    memory_id: str = Field(
        sa_column=sa.Column(sa.String(200), sa.ForeignKey("memory.memory_id"), nullable=False)
    )
    from_state: Optional[str] = Field(default=None, max_length=40)
    to_state: str = Field(max_length=40)
    reason: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    comment: Optional[str] = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    actor_type: str = Field(max_length=20)
    actor_id: str = Field(max_length=200)
    actor_role: Optional[str] = Field(default=None, max_length=20)
    job_id: Optional[str] = Field(default=None, max_length=64)
    compensates: Optional[str] = Field(default=None, max_length=64)
    review_state_before: Optional[str] = Field(default=None, max_length=40)
    decision_id: Optional[str] = Field(default=None, max_length=64)
    created_at: datetime
    # tamper evidence (issue 9): sha256 over the previous event of the same memory and this event
    prev_hash: Optional[str] = Field(default=None, max_length=64)
    event_hash: Optional[str] = Field(default=None, max_length=64)


class MaintenanceJob(SQLModel, table=True):
    """One run of a maintenance job (seed 000 §23.4): type, status, selected and updated counts, times."""

    __tablename__ = "memory_maintenance_jobs"

    job_id: str = Field(primary_key=True, max_length=64)
    job_type: str = Field(max_length=40)
    status: str = Field(max_length=20)  # running | completed | failed | dry_run | abandoned
    repository_id: Optional[str] = Field(default=None, max_length=200)
    selected_count: int = 0
    updated_count: int = 0
    dry_run: bool = False
    clock: Optional[datetime] = None  # the --now the job ran with, if fixed
    summary: dict[str, Any] = Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))
    started_at: datetime
    completed_at: Optional[datetime] = None
    # the process running it (issue 21 item 7): a ``running`` job whose process is gone is ``abandoned``
    pid: Optional[int] = None
    host: Optional[str] = Field(default=None, max_length=255)
    process_started: Optional[str] = Field(default=None, max_length=80)  # boot id and start tick (Linux)


class Revalidation(SQLModel, table=True):
    """The latest revalidation result of a memory (seed 000 §8.3): status, reasons, current evidence."""

    __tablename__ = "memory_revalidation"

    memory_id: str = Field(
        sa_column=sa.Column(sa.String(200), sa.ForeignKey("memory.memory_id"), primary_key=True)
    )
    job_id: str = Field(max_length=64)
    status: str = Field(max_length=40)  # valid | needs_review | invalidated
    severity: str = Field(default="none", max_length=20)
    reasons: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    reason_codes: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    current_evidence: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    recommended_action: str = Field(max_length=40)
    checked_at: datetime
    # the statement with every moved path it names rewritten to the new path (issue 8), for the
    # reviewer to accept as an edit; None when nothing it names moved
    proposed_statement: Optional[str] = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))


class UsageEvent(SQLModel, table=True):
    """A memory used in a context pack and what came of it (seed 000 §16.2, §23.3)."""

    __tablename__ = "memory_usage_events"

    usage_id: str = Field(primary_key=True, max_length=64)
    memory_id: str = Field(
        sa_column=sa.Column(sa.String(200), sa.ForeignKey("memory.memory_id"), nullable=False, index=True)
    )
    workflow_run_id: Optional[str] = Field(default=None, max_length=200)
    context_pack_id: Optional[str] = Field(default=None, max_length=200)
    usage_type: str = Field(max_length=40)  # context_pack | cited | ignored | contradicted
    outcome: str = Field(max_length=20)  # positive | negative | neutral | harm
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))
    created_at: datetime


class HarmEvent(SQLModel, table=True):
    """A memory that caused harm (seed 000 §16.3): the issue and the action taken."""

    __tablename__ = "memory_harm_events"

    harm_id: str = Field(primary_key=True, max_length=64)
    memory_id: str = Field(
        sa_column=sa.Column(sa.String(200), sa.ForeignKey("memory.memory_id"), nullable=False, index=True)
    )
    issue: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    action: str = Field(max_length=40)
    created_at: datetime


class DuplicateCluster(SQLModel, table=True):
    """A proposed cluster of near-duplicate memories (issue 4): members, the proposed canonical, scores."""

    __tablename__ = "duplicate_cluster"

    cluster_id: str = Field(primary_key=True, max_length=64)
    repository_id: Optional[str] = Field(default=None, max_length=200)
    scope_key: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    type: str = Field(max_length=80)
    members: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    canonical_id: str = Field(max_length=200)
    best_score: float = 0.0
    scores: dict[str, Any] = Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))
    method: str = Field(max_length=20)  # exact | fingerprint | fuzzy
    explanation: str = Field(default="", sa_column=sa.Column(sa.Text, nullable=False))
    status: str = Field(default="open", max_length=20)  # open | possible | merged | dismissed | stale
    job_id: Optional[str] = Field(default=None, max_length=64)
    created_at: datetime
    decided_at: Optional[datetime] = None


class NotDuplicatePair(SQLModel, table=True):
    """Two memories a reviewer said are not duplicates; never proposed together again (ids sorted)."""

    __tablename__ = "not_duplicate_pair"

    memory_a: str = Field(primary_key=True, max_length=200)
    memory_b: str = Field(primary_key=True, max_length=200)
    actor_id: str = Field(max_length=200)
    decision_id: Optional[str] = Field(default=None, max_length=64)
    created_at: datetime
    # sha256 of both statements when dismissed: the pair is proposed again once either changes (issue 20)
    pair_hash: Optional[str] = Field(default=None, max_length=64)


class MemoryConflict(SQLModel, table=True):
    """A conflict record (seed 000 §10.3): two memories of one scope with incompatible claims.

    ``status`` ``open`` is a *likely* conflict (both memories held out of default recall, approval
    blocked); ``possible`` a ranked suggestion that acts on nothing (issue 20); ``resolved`` and
    ``not_a_conflict`` are decided. ``score``: P(conflict) in [0, 1]; ``pair_hash``: sha256 of both
    statements as judged (:func:`memtui.similarity.tiers.pair_hash`)."""

    __tablename__ = "memory_conflict"

    conflict_id: str = Field(primary_key=True, max_length=64)
    severity: str = Field(max_length=20)
    tenant_id: str = Field(default="default", max_length=200)
    repository_id: Optional[str] = Field(default=None, max_length=200)
    module_path: Optional[str] = Field(default=None)
    memory_a: str = Field(max_length=200, index=True)
    memory_b: str = Field(max_length=200, index=True)
    status: str = Field(default="open", max_length=20, index=True)  # open | possible | resolved | not_a_conflict
    action: str = Field(default="exclude_both_from_default_context", max_length=60)
    reason: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    resolution: Optional[str] = Field(default=None, max_length=40)
    resolved_by: Optional[str] = Field(default=None, max_length=200)
    job_id: Optional[str] = Field(default=None, max_length=64)
    created_at: datetime
    resolved_at: Optional[datetime] = None
    score: Optional[float] = None
    pair_hash: Optional[str] = Field(default=None, max_length=64)


class CompactionProposal(SQLModel, table=True):
    """Related narrow memories proposed as one statement keeping all their evidence (seed 000 §12)."""

    __tablename__ = "compaction_proposal"

    proposal_id: str = Field(primary_key=True, max_length=64)
    tenant_id: str = Field(default="default", max_length=200)
    repository_id: Optional[str] = Field(default=None, max_length=200)
    module_path: Optional[str] = Field(default=None)
    members: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    proposed_statement: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    proposed_type: str = Field(max_length=80)
    shared: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    broadens_scope: bool = False
    status: str = Field(default="open", max_length=20)  # open | accepted | rejected | stale
    new_memory_id: Optional[str] = Field(default=None, max_length=200)
    job_id: Optional[str] = Field(default=None, max_length=64)
    created_at: datetime
    decided_at: Optional[datetime] = None
    decided_by: Optional[str] = Field(default=None, max_length=200)


class ReviewDecision(SQLModel, table=True):
    """A multi-memory decision (merge, conflict resolution, compaction) and what undoing it must restore."""

    __tablename__ = "review_decision"

    decision_id: str = Field(primary_key=True, max_length=64)
    kind: str = Field(max_length=40)  # merge | not_duplicates | conflict | compaction
    subject_id: str = Field(max_length=64)
    action: str = Field(max_length=40)
    actor_id: str = Field(max_length=200)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))
    undone_by: Optional[str] = Field(default=None, max_length=64)
    created_at: datetime


class Reviewer(SQLModel, table=True):
    """A reviewer identity of a shared store (issue 9): role and the scopes it may see and decide.

    ``scopes`` lists ``tenant[/repository[/module]]`` strings; ``*`` is every tenant. An empty
    table means a single-user store in which the login user holds every role. ``name`` is the
    identity a connection has (the login name on SQLite, the ``current_user`` role on PostgreSQL;
    issue 21 item 5).

    Who may grant what (issue 21 item 8; ``memtui.governance.reviewers.GRANTABLE``): a lead makes
    reviewers, maintainers and leads; a maintainer reviewers and maintainers, never a lead (himself
    included); a reviewer nothing. Granted scopes lie within the granter's own scopes, and a row is
    changed or removed only by someone who could have granted its current role and scopes.
    """

    __tablename__ = "reviewer"

    name: str = Field(primary_key=True, max_length=200)
    role: str = Field(max_length=20)  # reviewer | lead | maintainer
    scopes: list[str] = Field(default_factory=list, sa_column=sa.Column(sa.JSON, nullable=False))
    added_by: str = Field(max_length=200)
    added_at: datetime


class ReviewerDelegation(SQLModel, table=True):
    """The reviewer ``delegate`` (a connection's identity) may act as ``principal`` with
    ``--actor principal`` (issue 21 item 5); granted by a lead (:mod:`memtui.governance.reviewers`)."""

    __tablename__ = "reviewer_delegation"

    delegate: str = Field(primary_key=True, max_length=200)
    principal: str = Field(primary_key=True, max_length=200)
    granted_by: str = Field(max_length=200)
    granted_at: datetime


class AuditEvent(SQLModel, table=True):
    """An audited governance event (design §22): reviewer changes, refusals, secret incidents,
    purges, exports, visibility changes. ``subject`` names the memory or reviewer concerned."""

    __tablename__ = "audit_event"
    __table_args__ = (sa.Index("ix_audit_kind_subject", "kind", "subject"),)

    audit_id: str = Field(primary_key=True, max_length=64)
    kind: str = Field(max_length=40)
    actor_id: str = Field(max_length=200)
    subject: Optional[str] = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    detail: dict[str, Any] = Field(default_factory=dict, sa_column=sa.Column(sa.JSON, nullable=False))
    created_at: datetime


class SecretFinding(SQLModel, table=True):
    """A secret found in a memory field. Holds the secret's type and sha256, never the secret.

    ``memory_id`` carries no foreign key: the finding outlives a purge of its memory.
    """

    __tablename__ = "secret_finding"

    finding_id: str = Field(primary_key=True, max_length=64)
    memory_id: str = Field(max_length=200, index=True)
    field: str = Field(max_length=80)
    secret_type: str = Field(max_length=80)
    secret_hash: str = Field(max_length=64)
    scanner_version: str = Field(max_length=80)
    job_id: Optional[str] = Field(default=None, max_length=64)
    found_at: datetime


class StoreSetting(SQLModel, table=True):
    """A key/value setting kept in the store (e.g. the secret scanner version last run)."""

    __tablename__ = "store_setting"

    key: str = Field(primary_key=True, max_length=80)
    value: str = Field(sa_column=sa.Column(sa.Text, nullable=False))


class ReviewClaim(SQLModel, table=True):
    """A reviewer's claim on a queue item, so two reviewers never work the same item (issue 9)."""

    __tablename__ = "review_claim"

    memory_id: str = Field(
        sa_column=sa.Column(sa.String(200), sa.ForeignKey("memory.memory_id", ondelete="CASCADE"),
                            primary_key=True)
    )
    claimed_by: str = Field(max_length=200)
    claimed_at: datetime
    expires_at: datetime


class ApiToken(SQLModel, table=True):
    """A bearer token of the HTTP API (issue 12): only the sha256 of its secret is kept.

    ``kind`` ``reviewer``: the holder acts as the reviewer ``name`` (role and scopes from the
    reviewer table at each request); ``agent``: an agent actor that recalls and reports usage but
    never decides. ``expires_at`` None never expires; a revoked token stays listed."""

    __tablename__ = "api_token"

    token_id: str = Field(primary_key=True, max_length=64)
    name: str = Field(max_length=200, index=True)
    kind: str = Field(max_length=20)  # reviewer | agent
    token_hash: str = Field(sa_column=sa.Column(sa.String(64), nullable=False, unique=True))
    created_by: str = Field(max_length=200)
    created_at: datetime
    expires_at: Optional[datetime] = None
    revoked_at: Optional[datetime] = None
    revoked_by: Optional[str] = Field(default=None, max_length=200)
    last_used_at: Optional[datetime] = None


class JudgeVerdict(SQLModel, table=True):
    """A verdict of the pluggable judge (issue 20, item 6), cached by ``cache_key`` (sha256 of the
    pair's statements, the model and the prompt version): ``verdict`` duplicate / conflict / neither."""

    __tablename__ = "judge_verdict"

    cache_key: str = Field(primary_key=True, max_length=64)
    model: str = Field(max_length=200)
    verdict: str = Field(max_length=20)
    reason: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    created_at: datetime


class IntegrityChain(SQLModel, table=True):
    """The store-level chain (issue 21 item 6): each row seals one memory, reviewer, delegation or
    token as a transaction left it (``digest``, None once it is gone), linked to the store's previous
    row by ``hash`` (HMAC when the store is keyed). Written only by :mod:`memtui.review.chain`."""

    __tablename__ = "integrity_chain"
    __table_args__ = (sa.Index("ix_integrity_chain_subject", "kind", "subject", "seq"),)

    seq: int = Field(sa_column=sa.Column(sa.BigInteger, primary_key=True, autoincrement=False))
    kind: str = Field(max_length=20)  # memory | reviewer | delegation | token
    subject: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    digest: Optional[str] = Field(default=None, max_length=200)
    prev_hash: str = Field(max_length=64)
    hash: str = Field(max_length=64)


class IntegrityHead(SQLModel, table=True):
    """The head of the store chain (one row, ``id`` 1; also the lock appenders take on PostgreSQL):
    the latest ``seq`` and ``last_hash``, whether the store is ``keyed`` (and ``key_check``, an HMAC
    that tells the right key from a wrong one), and ``mac`` over all of it."""

    __tablename__ = "integrity_head"

    id: int = Field(sa_column=sa.Column(sa.Integer, primary_key=True, autoincrement=False))
    seq: int = Field(sa_column=sa.Column(sa.BigInteger, nullable=False))
    last_hash: str = Field(max_length=64)
    keyed: bool = False
    key_check: Optional[str] = Field(default=None, max_length=64)
    mac: str = Field(max_length=64)


class StoreChange(SQLModel, table=True):
    """The store-wide change counter (one row, ``id`` 1; migration 0012's triggers move ``n``): read it
    with :func:`memtui.store.changes.current`."""

    __tablename__ = "store_change"

    id: int = Field(sa_column=sa.Column(sa.Integer, primary_key=True, autoincrement=False))
    n: int = Field(sa_column=sa.Column(sa.BigInteger, nullable=False))
