"""Read side of duplicates, conflicts and compaction proposals: plain views for the screens and the CLI."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.invariants import Actor
from memtui.review.service import MemoryOutOfScope, ReviewService
from memtui.review.views import MemoryDetailView
from memtui.store.models import CompactionProposal, DuplicateCluster, MemoryConflict, ReviewDecision


@dataclass(frozen=True)
class ClusterView:
    """A duplicate cluster with its members' full records; ``scores`` maps "a|b" to a 0-100 similarity."""

    cluster_id: str
    scope_key: str
    type: str
    canonical_id: str
    best_score: float
    method: str
    explanation: str
    status: str
    members: tuple[MemoryDetailView, ...]
    scores: dict

    def score_with_canonical(self, memory_id: str, canonical_id: str | None = None) -> float | None:
        """The similarity of ``memory_id`` to the canonical (or to ``canonical_id``), if it was scored."""
        c = canonical_id or self.canonical_id
        if memory_id == c:
            return 100.0
        for key in (f"{memory_id}|{c}", f"{c}|{memory_id}"):
            if key in self.scores:
                return float(self.scores[key])
        return None


@dataclass(frozen=True)
class ConflictView:
    """A conflict record with both memories' full records (A and B)."""

    conflict_id: str
    severity: str
    status: str
    reason: str
    action: str
    resolution: str | None
    a: MemoryDetailView
    b: MemoryDetailView
    newer: tuple[str, str, str] | None = None  # (newer id, older id, why): the proposed "newer supersedes older"
    score: float | None = None  # P(conflict) in [0, 1]

    @property
    def tier(self) -> str:
        """``likely`` (open: both held out of default recall) or ``possible`` (a suggestion), else the status."""
        return {"open": "likely", "possible": "possible"}.get(self.status, self.status)


@dataclass(frozen=True)
class ProposalView:
    """A compaction proposal with its members' full records."""

    proposal_id: str
    status: str
    proposed_statement: str
    proposed_type: str
    module_path: str | None
    repository_id: str | None
    shared: tuple[str, ...]
    broadens_scope: bool
    members: tuple[MemoryDetailView, ...]
    new_memory_id: str | None


class ProposalQueries:
    """Lists and details of clusters, conflicts and proposals (open first)."""

    def __init__(self, engine: Engine, viewer: Actor | None = None):
        self.engine = engine
        self.review = ReviewService(engine, viewer)

    def _details(self, ids) -> tuple | None:
        """The members' details, or None when one lies outside the viewer's scopes (issue 9)."""
        try:
            return tuple(self.review.detail(m) for m in ids)
        except MemoryOutOfScope:
            return None

    def clusters(self, status: str | tuple[str, ...] | None = "open") -> list[ClusterView]:
        """Duplicate clusters (default: open; a tuple: any of those), likely before possible, then
        largest and best-scoring first."""
        with Session(self.engine) as s:
            q = select(DuplicateCluster)
            if status:
                q = q.where(DuplicateCluster.status.in_((status,) if isinstance(status, str) else status))
            rows = list(s.exec(q))
        rows.sort(key=lambda c: (c.status == "possible", -len(c.members), -c.best_score, c.cluster_id))
        return [ClusterView(c.cluster_id, c.scope_key, c.type, c.canonical_id, c.best_score, c.method,
                            c.explanation, c.status, members, dict(c.scores or {}))
                for c in rows if (members := self._details(c.members)) is not None]

    def conflicts(self, status: str | tuple[str, ...] | None = "open") -> list[ConflictView]:
        """Conflict records (default: open, i.e. likely; a tuple: any of those): likely ones first, high
        severity first; then possible ones, the strongest first."""
        from memtui.review.resolve import newer_side

        with Session(self.engine) as s:
            q = select(MemoryConflict)
            if status:
                q = q.where(MemoryConflict.status.in_((status,) if isinstance(status, str) else status))
            rows = list(s.exec(q))
            newer = {c.conflict_id: newer_side(s, c.memory_a, c.memory_b) for c in rows if c.status == "open"}
        order = {"high": 0, "medium": 1, "low": 2}
        # a conflict with a proposed resolution (newer supersedes older) first: the quickest to decide
        rows.sort(key=lambda c: (c.status == "possible", newer.get(c.conflict_id) is None, order.get(c.severity, 3),
                                 -(c.score or 0), c.conflict_id))
        return [ConflictView(c.conflict_id, c.severity, c.status, c.reason, c.action, c.resolution, *pair,
                             newer=newer.get(c.conflict_id), score=c.score)
                for c in rows if (pair := self._details((c.memory_a, c.memory_b))) is not None]

    def proposals(self, status: str | None = "open") -> list[ProposalView]:
        """Compaction proposals (default: open), by id."""
        with Session(self.engine) as s:
            q = select(CompactionProposal)
            if status:
                q = q.where(CompactionProposal.status == status)
            rows = sorted(s.exec(q), key=lambda p: p.proposal_id)
        return [ProposalView(p.proposal_id, p.status, p.proposed_statement, p.proposed_type, p.module_path,
                             p.repository_id, tuple(p.shared or ()), p.broadens_scope, members, p.new_memory_id)
                for p in rows if (members := self._details(p.members)) is not None]

    def last_decision(self, actor_id: str) -> str | None:
        """The newest multi-memory decision by ``actor_id`` that is not undone (for ``u`` on these screens)."""
        with Session(self.engine) as s:
            return s.exec(select(ReviewDecision.decision_id).where(
                ReviewDecision.actor_id == actor_id, ReviewDecision.kind != "undo",
                ReviewDecision.undone_by.is_(None)).order_by(ReviewDecision.decision_id.desc())).first()
