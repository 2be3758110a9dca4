"""Plain, frozen views the services hand to the TUI and CLI: no ORM rows, no sessions (STYLE.md, Elia)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memtui.clock import iso


@dataclass(frozen=True)
class ScopeView:
    """Where a memory applies: tenant, repository (None: org-wide), module path, applies/does-not-apply lists."""

    tenant_id: str
    repository_id: str | None
    module_path: str | None
    applies_to: tuple[str, ...] = ()
    does_not_apply_to: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``tenant/repository:module`` for a table cell; ``tenant/*`` for org-wide scope."""
        repo = self.repository_id or "*"
        return f"{self.tenant_id}/{repo}" + (f":{self.module_path}" if self.module_path else "")


@dataclass(frozen=True)
class QueueItemView:
    """One row of the review queue. ``rank`` and ``memory_id`` form the keyset cursor."""

    memory_id: str
    rank: int
    state: str
    type: str
    statement: str
    scope: ScopeView
    confidence: float
    created_at: datetime
    version: int
    key: tuple = ()  # the values of the queue's sort columns: the keyset cursor after this row
    impact: str = "normal"
    conflict_state: str = "none"


@dataclass(frozen=True)
class EvidenceView:
    """One piece of evidence as recorded (path, commit, 1-based inclusive lines, symbol, status)."""

    type: str
    path: str | None
    commit_sha: str | None
    line_start: int | None
    line_end: int | None
    symbol: str | None
    target: str | None
    ref: str | None
    span_hash: str | None
    status: str
    repository_id: str | None
    current_path: str | None = None
    current_line_start: int | None = None
    current_line_end: int | None = None
    current_commit: str | None = None
    reason_code: str | None = None
    status_reason: str | None = None

    @property
    def git_checkable(self) -> bool:
        """Whether revalidation can check it against git: a file at a commit (human, replay and
        ref evidence without one is ``not_checkable``; revalidation.engine)."""
        return bool(self.path and self.commit_sha)

    @property
    def current_location(self) -> str | None:
        """``path:start-end@commit7`` where revalidation last found the evidence at HEAD, or None."""
        if not self.current_path or self.current_line_start is None:
            return None
        end = f"-{self.current_line_end}" if self.current_line_end not in (None, self.current_line_start) else ""
        at = f"@{self.current_commit[:7]}" if self.current_commit else ""
        return f"{self.current_path}:{self.current_line_start}{end}{at}"

    @property
    def location(self) -> str:
        """``path:start-end@commit7`` or the symbol/ref when there is no path."""
        parts = []
        if self.path:
            loc = self.path
            if self.line_start is not None:
                loc += f":{self.line_start}" + (
                    f"-{self.line_end}" if self.line_end not in (None, self.line_start) else ""
                )
            parts.append(loc)
        if self.symbol:
            parts.append(self.symbol + (f" CALLS {self.target}" if self.target and self.type == "call_edge" else ""))
        if self.ref in ("mention", "example") and self.target and self.target not in parts:
            parts.append(f"named as {self.target!r}" + (" (example)" if self.ref == "example" else ""))
        if self.ref and not parts:
            parts.append(self.ref)
        text = "  ".join(parts) or "-"
        if self.commit_sha:
            text += f"@{self.commit_sha[:7]}"
        return text


@dataclass(frozen=True)
class EventView:
    """One state-history event."""

    event_id: str
    memory_id: str
    from_state: str | None
    to_state: str
    reason: str
    comment: str | None
    actor_type: str
    actor_id: str
    actor_role: str | None
    job_id: str | None
    compensates: str | None
    created_at: datetime


@dataclass(frozen=True)
class MemoryDetailView:
    """A whole memory record with its evidence and history, for ``memtui show`` and the detail pane."""

    memory_id: str
    logical_memory_id: str
    type: str
    statement: str
    scope: ScopeView
    state: str
    confidence: float
    review_state: str
    conflict_state: str
    impact: str
    origin: str
    proposer_type: str | None
    proposer_id: str | None
    failure_class: str | None
    failure_type: str | None
    promotion_status: str | None
    requires_human_review: bool
    root_cause_summary: str | None
    tags: tuple[str, ...]
    invalidation_policy: tuple[dict, ...]
    created_at: datetime
    last_validated_at: datetime | None
    last_used_at: datetime | None
    expires_at: datetime | None
    expires_after_days: int | None
    review_after_days: int | None
    superseded_by: str | None
    version: int
    evidence: tuple[EvidenceView, ...] = field(default_factory=tuple)
    revalidation_status: str | None = None
    revalidation_reasons: tuple[str, ...] = ()
    proposed_statement: str | None = None  # revalidation's edit when a named path moved
    sources: tuple[str, ...] = ()  # the memories it was compacted or merged from (review.lineage)
    compaction_status: str | None = None  # its compaction proposal's status: pending_review | accepted
    #: what would stop the viewer approving it now: (gate, reason) (domain.invariants.approval_gates)
    gates: tuple[tuple[str, str], ...] = ()
    waiting_reason: str | None = None  # why it is in its state now (review.lifecycle.waiting_reason)

    @property
    def waits_for(self) -> str | None:
        """Why it waits in the review queue (its :attr:`waiting_reason`), or None when it is not in the queue."""
        from memtui.domain.states import QUEUE_STATES

        return self.waiting_reason if self.state in {s.value for s in QUEUE_STATES} else None


@dataclass(frozen=True)
class DecisionOutcome:
    """What a decision or an undo did: the event written and the states either side."""

    event_id: str
    memory_id: str
    from_state: str | None
    to_state: str
    compensates: str | None = None
    version: int | None = None  # the memory's version after the decision (what the next one must expect)


@dataclass(frozen=True)
class RepositoryHealth:
    """Counts per state for one repository (None: org-wide memory), with the design's summary keys (§19.3)."""

    repository_id: str | None
    by_state: dict[str, int]

    @property
    def total(self) -> int:
        """All memories of the repository, any state."""
        return sum(self.by_state.values())


def freshness_note(d: "MemoryDetailView") -> str | None:
    """What the detail says about revalidation when nothing was checked yet, or None.

    Only evidence git can check, of a memory with a repository, is ever revalidated: an org-wide
    memory or one with only human / replay / ref evidence is vouched for by its reviewer and
    would otherwise read "not revalidated yet" forever (issue 11)."""
    if not d.evidence or any(e.status != "unchecked" for e in d.evidence):
        return None
    kinds = ", ".join(sorted({e.type for e in d.evidence}))
    if not any(e.git_checkable for e in d.evidence):
        return f"{kinds} evidence: git does not revalidate it (no file at a commit); its reviewers vouch for it"
    if d.scope.repository_id is None:
        return f"org-wide: no repository to revalidate its {kinds} evidence against; its reviewers vouch for it"
    return "evidence not revalidated yet (m runs maintenance)"


def detail_json(d: "MemoryDetailView") -> dict:
    """A memory's record as ``memtui show --json`` and ``GET /memory/{id}`` give it (camelCase)."""
    return {
        "memoryId": d.memory_id, "logicalMemoryId": d.logical_memory_id, "type": d.type,
        "statement": d.statement,
        "scope": {"tenantId": d.scope.tenant_id, "repositoryId": d.scope.repository_id,
                  "modulePath": d.scope.module_path, "appliesTo": list(d.scope.applies_to),
                  "doesNotApplyTo": list(d.scope.does_not_apply_to)},
        "state": d.state, "confidence": d.confidence, "reviewState": d.review_state,
        "conflictState": d.conflict_state, "impact": d.impact, "origin": d.origin,
        "proposedBy": {"type": d.proposer_type, "id": d.proposer_id} if d.proposer_type else None,
        "failureClass": d.failure_class, "promotionStatus": d.promotion_status,
        "requiresHumanReview": d.requires_human_review, "tags": list(d.tags),
        "invalidationPolicy": list(d.invalidation_policy),
        "createdAt": iso(d.created_at), "lastValidatedAt": iso(d.last_validated_at),
        "lastUsedAt": iso(d.last_used_at), "expiresAt": iso(d.expires_at),
        "expiresAfterDays": d.expires_after_days, "reviewAfterDays": d.review_after_days,
        "supersededBy": d.superseded_by, "sources": list(d.sources), "compactionStatus": d.compaction_status,
        "waitingReason": d.waiting_reason,
        "version": d.version,
        "evidence": [
            {"type": e.type, "path": e.path, "commitSha": e.commit_sha,
             "lines": [e.line_start, e.line_end] if e.line_start is not None else None,
             "symbol": e.symbol, "target": e.target, "ref": e.ref, "spanHash": e.span_hash,
             "status": e.status, "repositoryId": e.repository_id,
             "current": {"path": e.current_path, "lines": [e.current_line_start, e.current_line_end],
                         "commitSha": e.current_commit} if e.current_path else None,
             "reasonCode": e.reason_code, "reason": e.status_reason}
            for e in d.evidence
        ],
        "revalidation": {"status": d.revalidation_status, "reasons": list(d.revalidation_reasons),
                         "proposedStatement": d.proposed_statement}
        if d.revalidation_status else None,
    }


def event_json(e: "EventView") -> dict:
    """A history event as ``memtui history --json`` and ``GET /memory/{id}/history`` give it."""
    return {"eventId": e.event_id, "memoryId": e.memory_id, "fromState": e.from_state, "toState": e.to_state,
            "reason": e.reason, "comment": e.comment, "actorType": e.actor_type, "actorId": e.actor_id,
            "actorRole": e.actor_role, "jobId": e.job_id, "compensates": e.compensates,
            "createdAt": iso(e.created_at)}


#: the widest a short id gets in a TUI list (issue 24, Build 1); the CLI prints ids up to :data:`CLI_ID` whole
SHORT_ID, CLI_ID = 10, 40
_HEX = frozenset("0123456789abcdef")


def short_id(memory_id: str, width: int = SHORT_ID) -> str:
    """The id as a list shows it beside the statement, at most ``width`` characters: whole when it fits; an
    id ending in a hash of 8 or more hex digits (``imp-markdown-24e3d7e794ae8a9ef8b1``) as ``…`` and its
    last ``width - 1`` characters; another as its first ``width - 1`` characters and ``…``. Any part of an
    id finds it again (the palette, the jump dialog)."""
    if len(memory_id) <= width:
        return memory_id
    tail = len(memory_id) - len(memory_id.rstrip("0123456789abcdef"))
    if tail >= 8:
        return "…" + memory_id[-(width - 1):]
    return memory_id[: width - 1] + "…"


def shorten(text: str | None, width: int) -> str:
    """``text`` on one line (whitespace collapsed), cut to at most ``width`` characters with ``…`` when
    longer: between words when a word ends in the last 40% (so no name is cut: ``LinkedHashM…``)."""
    s = " ".join((text or "").split())
    if width <= 0:
        return ""
    if len(s) <= width:
        return s
    cut = s[: max(0, width - 1)]
    space = cut.rfind(" ")
    if space > width * 0.6:
        cut = cut[:space]
    return cut + "…"


def labelled(memory_id: str, statement: str | None, width: int, id_width: int = CLI_ID) -> str:
    """``"<id>  <statement shortened>"`` in ``width`` characters: a memory on one line of a listing
    (the id shortened to ``id_width``, :func:`short_id`)."""
    sid = short_id(memory_id, id_width)
    return f"{sid}  {shorten(statement, width - len(sid) - 2)}".rstrip()
