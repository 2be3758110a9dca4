"""The accepted record shapes (docs/record-format.md), validated with pydantic.

Memory record: seed 000 §5; candidate: §6.3; promotion-gate candidate: seed 003
(``awtl.memory_candidate.v2``, snake_case as agents write it). Unknown fields are refused:
in a hand-edited file they are almost always typos.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from memtui.domain.states import (
    ConflictState,
    EvidenceStatus,
    EvidenceType,
    FailureClass,
    ReviewState,
    State,
)

POLICY_KEYS = ("symbolChanged", "edgeRemoved", "fileChanged", "docSuperseded")


def _utc(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value  # pydantic reports it
        return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
    return value


UtcTime = Annotated[datetime, BeforeValidator(_utc)]
NonEmpty = Annotated[str, Field(min_length=1)]
#: Ids: 1-200 characters, no whitespace or control characters (they end up in commands and file names).
RecordId = Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[^\s\x00-\x1f\x7f-\x9f]+$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=False, str_strip_whitespace=False)


class EvidenceIn(_Strict):
    """One piece of evidence. ``lines`` is ``[start, end]``, 1-based and inclusive."""

    type: EvidenceType
    path: str | None = None
    commitSha: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{4,64}$")
    lines: tuple[int, int] | None = None
    symbol: str | None = None
    target: str | None = None
    ref: str | None = None
    spanHash: str | None = Field(default=None, pattern=r"^sha256:[0-9a-f]{64}$")
    excerpt: str | None = None
    status: EvidenceStatus = EvidenceStatus.UNCHECKED
    repositoryId: str | None = None

    @field_validator("lines")
    @classmethod
    def _lines_ordered(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        if v is not None and not (1 <= v[0] <= v[1]):
            raise ValueError("lines must be [start, end] with 1 <= start <= end")
        return v

    @model_validator(mode="after")
    def _shape(self) -> "EvidenceIn":
        if self.type == EvidenceType.FILE_SPAN and not self.path:
            raise ValueError("a file_span needs a path")
        if self.type == EvidenceType.CALL_EDGE and not (self.symbol and self.target):
            raise ValueError("a call_edge needs symbol (caller) and target (callee)")
        if self.type == EvidenceType.SYMBOL and not self.symbol:
            raise ValueError("a symbol evidence needs symbol")
        return self


def _evidence_item(value: Any) -> Any:
    """A bare string is a path (if it names a file) or a free reference (seed 000 §6.3 writes ``- RuleRegistry.java``)."""
    if isinstance(value, str):
        tail = value.rsplit("/", 1)[-1]
        if "." in tail and ":" not in value and " " not in value:
            return {"type": "file_span", "path": value}
        return {"type": "ref", "ref": value}
    return value


EvidenceItem = Annotated[EvidenceIn, BeforeValidator(_evidence_item)]


class ScopeIn(_Strict):
    """Scope: tenant, repository (absent: org-wide), module path, applies-to / does-not-apply-to."""

    tenantId: str = "default"
    repositoryId: str | None = None
    modulePath: str | None = None
    appliesTo: list[str] = Field(default_factory=list)
    doesNotApplyTo: list[str] = Field(default_factory=list)


class ProposerIn(_Strict):
    """Who proposed the memory (``id`` may be given as ``workflowRunId``)."""

    type: str
    id: str | None = None
    workflowRunId: str | None = None


def _policy(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) != 1:
            raise ValueError("each invalidationPolicy entry is one mapping key: value")
        (key,) = value
        if key not in POLICY_KEYS:
            raise ValueError(f"unknown invalidation policy {key!r}; expected one of {', '.join(POLICY_KEYS)}")
        if not isinstance(value[key], str) or not value[key]:
            raise ValueError(f"{key} needs a non-empty text value")
    return value


PolicyItem = Annotated[dict[str, str], BeforeValidator(_policy)]


class MemoryIn(_Strict):
    """A memory record (seed 000 §5)."""

    memoryId: RecordId
    logicalMemoryId: str | None = None
    type: NonEmpty
    statement: NonEmpty
    scope: ScopeIn
    evidence: list[EvidenceItem] = Field(default_factory=list)
    state: State = State.CANDIDATE
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    reviewState: ReviewState = ReviewState.NONE
    conflictState: ConflictState = ConflictState.NONE
    impact: Literal["low", "normal", "high"] = "normal"
    origin: Literal["agent", "human", "system", "imported", "awtl", "docs_generated"] = "agent"
    proposedBy: ProposerIn | None = None
    createdAt: UtcTime | None = None
    lastValidatedAt: UtcTime | None = None
    lastUsedAt: UtcTime | None = None
    expiresAt: UtcTime | None = None
    expiresAfterDays: int | None = Field(default=None, ge=0)
    reviewAfterDays: int | None = Field(default=None, ge=0)
    supersededBy: str | None = None
    tags: list[str] = Field(default_factory=list)
    invalidationPolicy: list[PolicyItem] = Field(default_factory=list)


class ValidationIn(_Strict):
    """Candidate validation block (§6.3): its ``status`` becomes the promotion status."""

    status: str = "pending_review"


class CandidateIn(_Strict):
    """A candidate record (seed 000 §6.3)."""

    candidateId: RecordId
    proposedType: NonEmpty
    statement: NonEmpty
    proposedScope: ScopeIn
    evidence: list[EvidenceItem] = Field(default_factory=list)
    proposedBy: ProposerIn | None = None
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    validation: ValidationIn = Field(default_factory=ValidationIn)
    createdAt: UtcTime | None = None
    tags: list[str] = Field(default_factory=list)
    invalidationPolicy: list[PolicyItem] = Field(default_factory=list)
    expiresAfterDays: int | None = Field(default=None, ge=0)
    reviewAfterDays: int | None = Field(default=None, ge=0)


class AwtlScopeIn(_Strict):
    """Scope of a promotion-gate candidate (seed 003)."""

    applies_to: list[str] = Field(default_factory=list)
    does_not_apply_to: list[str] = Field(default_factory=list)


class AwtlCandidateIn(_Strict):
    """A promotion-gate candidate, ``awtl.memory_candidate.v2`` (seed 003), plus memtui's scope keys
    ``tenant_id``, ``repository_id``, ``module_path``, ``type``, ``confidence``, ``created_at``."""

    schema_: str | None = Field(default=None, alias="schema", pattern=r"^awtl\.memory_candidate\.v\d+$")
    candidate_id: RecordId
    failure_class: FailureClass
    failure_type: str | None = None
    source_action_ids: list[str] = Field(default_factory=list)
    root_cause_summary: str | None = None
    proposed_memory: NonEmpty
    scope: AwtlScopeIn = Field(default_factory=AwtlScopeIn)
    evidence_refs: list[str] = Field(default_factory=list)
    verification_probe_candidate: str | None = None
    promotion_status: str = "candidate"
    requires_human_review: bool = True
    tenant_id: str = "default"
    repository_id: str | None = None
    module_path: str | None = None
    type: str = "failure_lesson"
    confidence: float = Field(default=0.5, ge=0.0, le=1.0)
    created_at: UtcTime | None = None

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def record_kind(data: Any, hint: str | None) -> str:
    """``memory``, ``candidate`` or ``awtl`` for a raw record; the list it came from is the hint."""
    if isinstance(data, dict):
        if "candidate_id" in data or "schema" in data or "proposed_memory" in data:
            return "awtl"
        if "candidateId" in data:
            return "candidate"
        if "memoryId" in data:
            return "memory"
    return {"candidate": "candidate", "memory": "memory"}.get(hint or "", "memory")
