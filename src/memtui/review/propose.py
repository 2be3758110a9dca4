"""An agent proposes a memory: a *candidate*, never anything else (issue 12 item 1; seed 000 §6.2-6.3,
seed 003 "promotion is narrow"; DESIGN.md invariants 2, 5 and 8).

:func:`propose_memory` validates a :class:`Proposal` (statement, type, scope, evidence, failure class),
checks the scope against the evidence (invariant 2, :func:`memtui.domain.invariants.check_scope`),
scans for secrets and personal data (:func:`memtui.safety.guard.screen_memory`: a secret makes the
candidate arrive ``blocked``, stored redacted, with its findings), creates it through
:func:`memtui.review.lifecycle.create_memory` (the path imports take) and answers which existing
memories of the same scope it duplicates or contradicts (:func:`similar_memories`), so the agent can
stop proposing the same thing. An environment-blocker failure class is recorded; the promotion gate
(:func:`memtui.maintenance.promotion.gate_reason`) never promotes it automatically, and the answer says so.

The candidate's id is ``mcp-<24 hex>``, a SHA-256 of its scope, type and normalised (redacted)
statement: proposing the same thing again writes nothing and answers with the existing memory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pydantic import TypeAdapter, ValidationError
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor, InvariantViolation, check_scope
from memtui.domain.scopes import Scope
from memtui.domain.states import FailureClass
from memtui.similarity.text import normalize
from memtui.store.models import Evidence, Memory

#: States whose memory a proposal is compared with: in use, waiting, or already turned down
#: (a rejected duplicate tells the agent to stop as well as an active one). Blocked memory is never named.
SIMILAR_STATES = ("candidate", "approved", "active", "needs_review", "challenged", "rejected", "invalidated")
#: How many stored statements the cheap pre-filter hands to the pair judgement.
_SHORTLIST = 25
#: Pre-filter floor (score 0-100 of the dedupe scorer): below it a pair is neither duplicate nor conflict.
_SHORTLIST_FLOOR = 40.0
#: Evidence an agent may not supply: a replay is recorded by ``memtui replay record``, a human source by a person.
AGENT_FORBIDDEN_EVIDENCE = ("replay", "human")


class ProposalRefused(ValueError):
    """The proposal is refused before anything is written; ``field`` names the argument
    (``statement``, ``scope``, ``evidence[0].path`` ...) and ``str()`` is ``"FIELD: why"``."""

    def __init__(self, field_name: str, message: str):
        self.field = field_name
        super().__init__(f"{field_name}: {message}")


class SimilarMemory(NamedTuple):
    """An existing memory a statement duplicates or contradicts: ``kind`` duplicate / conflict,
    ``score`` 0-100 (the pair scorer's), and the memory's ``state``."""

    memory_id: str
    kind: str
    score: float
    state: str


@dataclass(frozen=True)
class Proposal:
    """What an agent proposes. ``scope``: tenant, repository (None: org-wide) and module path;
    ``evidence``: items of docs/record-format.md (a mapping, or a bare path / reference string)."""

    statement: str
    type: str
    scope: Scope
    evidence: list[Any]
    failure_class: str | None = None
    failure_type: str | None = None
    source_action_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProposalOutcome:
    """The candidate: its id and state (``candidate``, or ``blocked`` when it held a secret),
    whether this call created it (False: the same proposal was already in the store), the
    similar memories, the secret types and personal-data redactions found, and why the
    promotion gate will not promote it by itself."""

    memory_id: str
    state: str
    created: bool
    similar: tuple[SimilarMemory, ...]
    secret_types: tuple[str, ...] = ()
    redacted: tuple[tuple[str, str], ...] = ()
    promotion: str = ""
    scope_label: str = ""
    evidence_count: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)


def _modules_overlap(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return True
    a, b = a.strip("/") + "/", b.strip("/") + "/"
    return a.startswith(b) or b.startswith(a)


def similar_memories(session: Session, statement: str, scope: Scope, *, viewer: Actor | None = None,
                     exclude: str | None = None, limit: int = 5) -> list[SimilarMemory]:
    """Memories of ``scope`` (same tenant and repository, overlapping module paths; org-wide for a
    scope without repository) that ``statement`` near-duplicates or contradicts, best first,
    duplicates before conflicts; at most ``limit``. Only memory ``viewer`` may see, never blocked
    memory, never ``exclude`` (the proposal itself).

    The one place a proposal meets the pair scorer: a pre-filter keeps the :data:`_SHORTLIST` stored
    statements closest by the larger of the lexical dedupe score
    (:func:`memtui.maintenance.dedupe_index.pair_scores`) and 100 x the embedding cosine
    (:func:`memtui.similarity.embed.embed`); each is then judged by the learned scorer the dedupe and
    conflict jobs use (:func:`memtui.similarity.scorer.judge_profiles`), and a conflict is named only when
    it would be a likely one (:func:`memtui.similarity.tiers.conflict_tier`, the conflict job's rule; the
    lexical rules only for a pair that shares an identifier); the score is 100 x P(duplicate) or P(conflict).
    """
    import numpy as np

    from memtui.governance.visibility import restrict
    from memtui.maintenance.dedupe_index import pair_scores
    from memtui.similarity.embed import embed
    from memtui.similarity.features import profile
    from memtui.similarity.scorer import judge_profiles
    from memtui.similarity.statements import conflict_reason_analyzed
    from memtui.similarity.subjects import relation
    from memtui.similarity.tiers import conflict_tier
    from memtui.similarity.text import match_key

    if scope.tenant is None:
        return []
    query = select(Memory.memory_id, Memory.statement, Memory.module_path, Memory.state).where(
        Memory.tenant_id == scope.tenant, Memory.state.in_(SIMILAR_STATES),
        Memory.repository_id == scope.repository if scope.repository is not None else Memory.repository_id.is_(None))
    rows = [r for r in session.exec(restrict(query, session, viewer).order_by(Memory.memory_id))
            if r[0] != exclude and _modules_overlap(r[2], scope.module)]
    if not rows or not (statement or "").strip():
        return []
    key = match_key(statement)
    keys = [match_key(r[1]) for r in rows]
    E = embed([statement, *(r[1] for r in rows)])
    cos = E[1:] @ E[0]
    scores = np.maximum(pair_scores([key] * len(keys), keys), 100.0 * cos)
    shortlist = [int(i) for i in np.argsort(-scores, kind="stable")[:_SHORTLIST] if scores[i] >= _SHORTLIST_FLOOR]
    mine = profile(statement)
    others = [profile(rows[i][1]) for i in shortlist]
    cosines = [float(cos[i]) for i in shortlist]
    verdicts = judge_profiles([mine] * len(others), others, cosines)
    found: list[SimilarMemory] = []
    for i, o, v in zip(shortlist, others, verdicts):
        mid, text, _module, state = rows[i]
        shared = bool(mine.ids & o.ids)
        rule = conflict_reason_analyzed(mine.analyzed(), o.analyzed()) if shared else None
        if conflict_tier(v, rule, relation(statement, text), False, shared_names=shared).tier == "likely":
            found.append(SimilarMemory(mid, "conflict", round(100.0 * v.p_conflict, 1), state))
        elif v.kind == "duplicate":
            found.append(SimilarMemory(mid, "duplicate", round(100.0 * v.p_duplicate, 1), state))
    found.sort(key=lambda s: (s.kind != "duplicate", -s.score, s.memory_id))
    return found[:limit]


_EVIDENCE = None


def _evidence_adapter():
    global _EVIDENCE
    if _EVIDENCE is None:
        from memtui.importers.schema import EvidenceItem

        _EVIDENCE = TypeAdapter(list[EvidenceItem])
    return _EVIDENCE


def _evidence_rows(memory_id: str, evidence: list[Any]) -> list[Evidence]:
    """Validate the evidence items (docs/record-format.md) into rows; ProposalRefused naming the item."""
    if not isinstance(evidence, list) or not evidence:
        raise ProposalRefused("evidence", "a proposal needs at least one piece of evidence (a file span, "
                                          "symbol, call edge, doc, ADR or reference) -- seed 000 §6.2")
    for i, item in enumerate(evidence):
        if isinstance(item, dict):
            if item.get("type") in AGENT_FORBIDDEN_EVIDENCE:
                raise ProposalRefused(f"evidence[{i}].type", f"an agent cannot supply {item['type']} evidence "
                                      "(a replay is recorded with memtui replay record; a human source by a person)")
            if "status" in item:
                raise ProposalRefused(f"evidence[{i}].status", "evidence status is set by revalidation, "
                                                                "not by the proposer; leave it out")
    try:
        items = _evidence_adapter().validate_python(evidence)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = list(err.get("loc", ()))
        where = f"evidence[{loc[0]}]" if loc and isinstance(loc[0], int) else "evidence"
        rest = ".".join(str(p) for p in loc[1:] if not str(p).startswith(("function-", "tagged-union")))
        raise ProposalRefused(where + (f".{rest}" if rest else ""), err.get("msg", "invalid")) from None
    return [Evidence(memory_id=memory_id, ordinal=i, type=e.type.value, repository_id=e.repositoryId, path=e.path,
                     commit_sha=e.commitSha.lower() if e.commitSha else None,
                     line_start=e.lines[0] if e.lines else None, line_end=e.lines[1] if e.lines else None,
                     symbol=e.symbol, target=e.target, ref=e.ref, span_hash=e.spanHash, excerpt=e.excerpt,
                     status="unchecked")
            for i, e in enumerate(items)]


def _check_text(p: Proposal, evidence: list[Evidence]) -> None:
    from memtui.importers.limits import record_problems
    from memtui.text import control_problem

    if not (p.statement or "").strip():
        raise ProposalRefused("statement", "is empty")
    if not (p.type or "").strip() or len(p.type) > 80:
        raise ProposalRefused("type", "a memory type of 1-80 characters is required (e.g. repo_convention, "
                                      "code_fact, failure_lesson)")
    for name, value in (("type", p.type), ("failure_type", p.failure_type)):
        if problem := control_problem(name, value):
            raise ProposalRefused(name, problem)
    if p.failure_class is not None and p.failure_class not in {f.value for f in FailureClass}:
        raise ProposalRefused("failure_class", f"{p.failure_class!r} is not one of "
                                               + ", ".join(f.value for f in FailureClass))
    problems = record_problems(statement=p.statement,
                               excerpts=[(f"evidence[{i}].excerpt", e.excerpt) for i, e in enumerate(evidence)],
                               ids=[(f"source_action_ids[{i}]", a) for i, a in enumerate(p.source_action_ids)])
    if problems:
        raise ProposalRefused(*problems[0])


def proposal_id(scope: Scope, type_: str, statement: str) -> str:
    """``mcp-<24 hex>``: the same scope, type and normalised statement give the same id."""
    blob = "\x1f".join([scope.tenant or "", scope.repository or "", scope.module or "", type_, normalize(statement)])
    return "mcp-" + hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def propose_memory(engine: Engine, proposal: Proposal, actor: Actor) -> ProposalOutcome:
    """Create ``proposal`` as a candidate by ``actor`` (one transaction) and say what it resembles.

    Raises :class:`ProposalRefused` (naming the argument) for an empty statement or type, an unknown
    failure class, missing or malformed evidence, evidence an agent may not supply (replay, human),
    an unknown repository, a tenant that is not the repository's, or a scope broader than its
    evidence (invariant 2). Nothing is written then."""
    from memtui.domain.invariants import LifecycleError
    from memtui.maintenance.promotion import gate_reason
    from memtui.recall import RecallError, check_known_scope
    from memtui.review.lifecycle import create_memory, facts_of
    from memtui.safety.guard import SecretRefused, blocked_note, record_secret_findings, screen_memory

    scope = proposal.scope
    if scope.tenant is None:
        raise ProposalRefused("scope", "name a tenant and repository (tenant/repository[/module]), not *")
    now = utcnow()
    with Session(engine) as session, session.begin():
        try:
            check_known_scope(session, scope)
        except RecallError as exc:
            raise ProposalRefused("scope", str(exc)) from None
        memory = Memory(
            memory_id="pending", logical_memory_id="pending", type=proposal.type.strip(),
            statement=proposal.statement.strip(), tenant_id=scope.tenant, repository_id=scope.repository,
            module_path=scope.module, state="candidate", confidence=0.5, review_state="pending",
            conflict_state="none", impact="normal", origin="agent", proposer_type="agent", proposer_id=actor.id,
            failure_class=proposal.failure_class, failure_type=proposal.failure_type,
            promotion_status="candidate", requires_human_review=True,
            source_action_ids=list(proposal.source_action_ids), tags=["proposed:mcp"], created_at=now,
            import_source=f"mcp:{actor.id}")
        rows = _evidence_rows("pending", proposal.evidence)
        _check_text(proposal, rows)
        try:
            check_scope(facts_of(memory, rows))
        except InvariantViolation as exc:
            raise ProposalRefused("scope", f"broader than its evidence (invariant 2): {str(exc).split(': ', 2)[-1]}"
                                  ) from None
        try:  # secrets (and personal data) redacted in place; a secret blocks; in a scope key it is refused
            screen = screen_memory(memory, rows)
        except SecretRefused as exc:
            raise ProposalRefused("scope" if exc.field.startswith("scope.") else exc.field, str(exc)) from None
        mid = proposal_id(scope, memory.type, memory.statement)
        similar = tuple(similar_memories(session, memory.statement, scope, viewer=actor, exclude=mid))
        existing = session.get(Memory, mid)
        label = scope.label
        if existing is not None:
            return ProposalOutcome(mid, existing.state, False, similar, tuple(screen.types),
                                   tuple(screen.personal), gate_reason(session, existing) or "", label,
                                   len(rows), (f"the same proposal is already in the store ({existing.state})",))
        memory.memory_id = memory.logical_memory_id = mid
        for e in rows:
            e.memory_id = mid
        try:
            create_memory(session, memory, rows, actor,
                          reason=f"proposed by {actor.type} {actor.id} over MCP" + blocked_note(screen))
        except LifecycleError as exc:
            raise ProposalRefused("scope", str(exc)) from None
        if screen.blocked:
            record_secret_findings(session, mid, screen.secrets, actor, how="mcp")
        session.flush()
        return ProposalOutcome(mid, memory.state, True, similar, tuple(screen.types), tuple(screen.personal),
                               gate_reason(session, memory) or "", label, len(rows))
