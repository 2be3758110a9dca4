"""Decisions on several memories at once (issue 4): merging a duplicate cluster, resolving a
conflict, accepting or rejecting a compaction proposal — and undoing any of them.

Each decision is ONE transaction: the state changes (through the lifecycle function), the
evidence and text changes (each with a history event, grouped by ``decision_id``), the
proposal's status, and a :class:`ReviewDecision` row holding what undo must restore. Undo
writes compensating events; nothing is deleted but the evidence copies the decision added.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import iso, new_event_id, utcnow
from memtui.domain.invariants import Actor, LifecycleError
from memtui.domain.states import is_allowed
from memtui.domain.temporal import Dated, newer, observation_order
from memtui.review.lifecycle import (close_conflicts_of_retired, create_memory, load_evidence, record_note,
                                     refresh_conflict_state, transition)
from memtui.store.models import (
    CompactionProposal,
    DuplicateCluster,
    Evidence,
    Memory,
    MemoryConflict,
    NotDuplicatePair,
    ReviewDecision,
    StateHistory,
)

CONFLICT_ACTIONS = ("keep_a", "keep_b", "neither", "not_a_conflict", "narrow", "keep_newer")
_EVIDENCE_KEY = ("type", "path", "commit_sha", "line_start", "line_end", "symbol", "target", "ref")
_COPY_FIELDS = ("type", "repository_id", "path", "commit_sha", "line_start", "line_end", "symbol", "target",
                "ref", "span_hash", "excerpt", "status", "current_path", "current_line_start", "current_line_end",
                "current_commit", "reason_code", "status_reason")


class ResolveError(LifecycleError):
    """A multi-memory decision that cannot be made (unknown or already decided proposal, bad choice)."""


@dataclass(frozen=True)
class DecisionResult:
    """What a decision did: its id, kind, action and the memories whose state changed (id -> (from, to))."""

    decision_id: str
    kind: str
    action: str
    changes: dict[str, tuple[str, str]]
    new_memory_id: str | None = None


def _ev_key(e: Evidence) -> tuple:
    return tuple(getattr(e, f) for f in _EVIDENCE_KEY)


def _copy_evidence(session: Session, into: Memory, sources: list[Evidence], start: int) -> list[int]:
    """Copy evidence rows onto ``into`` (skipping ones it already has); returns the new rows' ids."""
    have = {_ev_key(e) for e in load_evidence(session, into.memory_id)}
    added = []
    for n, e in enumerate(sources):
        if _ev_key(e) in have:
            continue
        have.add(_ev_key(e))
        row = Evidence(memory_id=into.memory_id, ordinal=start + n, **{f: getattr(e, f) for f in _COPY_FIELDS})
        session.add(row)
        session.flush()
        added.append(row.evidence_id)
    return added


def _retire_state(m: Memory) -> str:
    """The state a memory judged wrong goes to: a candidate is rejected, anything in use invalidated."""
    return "rejected" if m.state == "candidate" else "invalidated"


def _get(session: Session, model, key: str, what: str):
    row = session.get(model, key)
    if row is None:
        raise ResolveError(f"no {what} {key!r} in the store")
    return row


def _memory(session: Session, memory_id: str) -> Memory:
    return _get(session, Memory, memory_id, "memory")


def _decision(session: Session, kind: str, subject: str, action: str, actor: Actor, payload: dict) -> ReviewDecision:
    d = ReviewDecision(decision_id=new_event_id("dec"), kind=kind, subject_id=subject, action=action,
                       actor_id=actor.id, payload=payload, created_at=utcnow())
    session.add(d)
    return d


def _commented(decision: ReviewDecision, comment: str | None) -> None:
    """Keep the reviewer's ``comment`` (why) in the decision's payload, for the decision report (issue 11,
    item 7); set last, after the payload is complete. A comment holding a secret was refused before."""
    if comment:
        decision.payload = {**(decision.payload or {}), "comment": comment}


def _refuse_secret(comment: str | None) -> None:
    from memtui.safety.guard import refuse_secret_comment

    refuse_secret_comment(comment)  # issue 9: a secret never reaches the store


def _dated(m: Memory) -> Dated:
    source = f"{m.proposer_type}:{m.proposer_id}" if m.proposer_type and m.proposer_id else None
    high = m.type == "architecture_decision" or m.impact == "high" or m.repository_id is None
    return Dated(m.memory_id, m.created_at, source, observation_order(m.tags), m.type, high, m.confidence)


def newer_side(session: Session, memory_a: str, memory_b: str) -> tuple[str, str, str] | None:
    """The proposed resolution of a conflict between two dated facts (issue 10, item 5): ``(newer id,
    older id, why)`` when one is recorded later (:func:`memtui.domain.temporal.newer`), else None."""
    a, b = session.get(Memory, memory_a), session.get(Memory, memory_b)
    if a is None or b is None:
        return None
    winner = newer(_dated(a), _dated(b))
    if winner is None:
        return None
    new, old = (a, b) if winner == a.memory_id else (b, a)
    na, nb = observation_order(new.tags), observation_order(old.tags)
    when = (f"observation {na} after {nb}" if na and nb and na != nb
            else f"{iso(new.created_at)[:10]} after {iso(old.created_at)[:10]}")
    return new.memory_id, old.memory_id, f"newer supersedes older: {new.memory_id} ({when}) replaces {old.memory_id}"


def _open_conflict_partners(session: Session, memory_id: str) -> set[str]:
    """The memories ``memory_id`` is in an open conflict with."""
    rows = session.exec(select(MemoryConflict).where(
        MemoryConflict.status == "open",
        (MemoryConflict.memory_a == memory_id) | (MemoryConflict.memory_b == memory_id)))
    return {c.memory_b if c.memory_a == memory_id else c.memory_a for c in rows}


def _narrower(old: str | None, new: str | None) -> bool:
    """Whether module path ``new`` lies strictly inside ``old`` (None: the whole repository)."""
    if not new:
        return False
    new = new.strip("/")
    if old is None:
        return True
    old = old.strip("/")
    return new != old and new.startswith(old + "/")


class ResolveService:
    """Merge clusters, resolve conflicts, accept or reject compaction proposals, undo any of them."""

    def __init__(self, engine: Engine):
        self.engine = engine

    # ---- duplicates ----------------------------------------------------------------------
    def merge(self, cluster_id: str, actor: Actor, *, canonical_id: str | None = None,
              canonical_text: str | None = None, comment: str | None = None) -> DecisionResult:
        """Merge a duplicate cluster into its canonical member (or ``canonical_id``), optionally with
        edited text. The canonical keeps the union of the members' evidence, tags, the highest
        confidence and the latest use; the others become ``superseded`` with ``supersededBy``
        (seed 000 §11.3-11.4). Raises ResolveError, TransitionRefused, InvariantViolation; SecretInComment
        when the edited text holds a secret (issue 9)."""
        from memtui.safety.guard import refuse_secret_comment

        refuse_secret_comment(canonical_text, "edited statement")
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            cluster = _get(session, DuplicateCluster, cluster_id, "duplicate cluster")
            if cluster.status != "open":
                raise ResolveError(f"cluster {cluster_id} is {cluster.status}, not open")
            canonical_id = canonical_id or cluster.canonical_id
            if canonical_id not in cluster.members:
                raise ResolveError(f"{canonical_id} is not a member of cluster {cluster_id}")
            canon = _memory(session, canonical_id)
            others = [_memory(session, m) for m in cluster.members if m != canonical_id]
            if canonical_text is not None and not canonical_text.strip():
                raise ResolveError("the canonical text cannot be empty")
            decision = _decision(session, "merge", cluster_id, "merge", actor, {})
            payload: dict[str, Any] = {
                "canonical": canonical_id, "statement": canon.statement, "confidence": canon.confidence,
                "tags": list(canon.tags or []), "lastUsedAt": iso(canon.last_used_at), "addedEvidence": [],
            }
            changes = {}
            next_ordinal = len(load_evidence(session, canonical_id))
            for o in others:
                added = _copy_evidence(session, canon, load_evidence(session, o.memory_id), next_ordinal)
                next_ordinal += len(added)
                payload["addedEvidence"] += added
                canon.confidence = max(canon.confidence, o.confidence)
                canon.tags = sorted(set(canon.tags or []) | set(o.tags or []))
                if o.last_used_at and (canon.last_used_at is None or o.last_used_at > canon.last_used_at):
                    canon.last_used_at = o.last_used_at
            if canonical_text is not None and canonical_text != canon.statement:
                canon.statement = canonical_text
            session.add(canon)
            record_note(session, canon, actor, f"merged cluster {cluster_id}: kept as canonical of "
                        f"{', '.join(o.memory_id for o in others)}"
                        + (" with edited text" if canonical_text and canonical_text != payload["statement"] else ""),
                        decision_id=decision.decision_id)
            for o in others:
                before = o.state
                transition(session, o, "superseded", actor, reason=f"merged into {canonical_id} (cluster {cluster_id})",
                           decision_id=decision.decision_id)
                o.superseded_by = canonical_id
                session.add(o)
                changes[o.memory_id] = (before, "superseded")
            session.flush()
            closed = [c for o in others for c in close_conflicts_of_retired(session, o, actor, decision.decision_id)]
            cluster.status, cluster.decided_at = "merged", utcnow()
            session.add(cluster)
            payload["closed"] = closed
            decision.payload = payload
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "merge", "merge", changes)

    def not_duplicates(self, cluster_id: str, actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """Dismiss a cluster: every pair of its members is remembered as not duplicates (never proposed again)."""
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            cluster = _get(session, DuplicateCluster, cluster_id, "duplicate cluster")
            decision = _decision(session, "not_duplicates", cluster_id, "not_duplicates", actor, {})
            decision.payload = {"pairs": self._dismiss_cluster(session, cluster, actor, decision.decision_id),
                                "status": {cluster_id: cluster.status}}
            cluster.status, cluster.decided_at = "dismissed", utcnow()
            session.add(cluster)
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "not_duplicates", "not_duplicates", {})

    @staticmethod
    def _dismiss_cluster(session: Session, cluster: DuplicateCluster, actor: Actor, decision_id: str) -> list[list[str]]:
        """Remember every pair of an open or possible cluster as not duplicates (with both statements'
        hash: proposed again once either changes); returns the pairs added."""
        from memtui.similarity.tiers import pair_hash

        if cluster.status not in ("open", "possible"):
            raise ResolveError(f"cluster {cluster.cluster_id} is {cluster.status}, not open")
        pairs = []
        members = sorted(cluster.members)
        statements = {mid: _memory(session, mid).statement for mid in members}
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                row = session.get(NotDuplicatePair, (a, b))
                if row is None:
                    session.add(NotDuplicatePair(memory_a=a, memory_b=b, actor_id=actor.id, decision_id=decision_id,
                                                 created_at=utcnow(), pair_hash=pair_hash(statements[a], statements[b])))
                    pairs.append([a, b])
        for mid in members:
            record_note(session, _memory(session, mid), actor, f"cluster {cluster.cluster_id}: not duplicates",
                        decision_id=decision_id)
        return pairs

    def dismiss_duplicates(self, cluster_ids: list[str], actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """"Not duplicates" for several open or possible clusters in one transaction and one decision (one
        undo restores them all; the comment applies to all). Raises ResolveError naming the first cluster
        that is missing or already decided; then nothing is written."""
        _refuse_secret(comment)
        ids = list(dict.fromkeys(cluster_ids))
        if not ids:
            raise ResolveError("no duplicate clusters given")
        with Session(self.engine) as session, session.begin():
            decision = _decision(session, "not_duplicates_batch", f"{len(ids)} clusters", "not_duplicates", actor, {})
            pairs, status = [], {}
            for cid in ids:
                cluster = _get(session, DuplicateCluster, cid, "duplicate cluster")
                pairs += self._dismiss_cluster(session, cluster, actor, decision.decision_id)
                status[cid] = cluster.status
                cluster.status, cluster.decided_at = "dismissed", utcnow()
                session.add(cluster)
            decision.payload = {"pairs": pairs, "status": status}
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "not_duplicates_batch", "not_duplicates", {})

    def promote_duplicate(self, cluster_id: str, actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """A possible duplicate pair becomes a likely cluster (open: it can be merged)."""
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            cluster = _get(session, DuplicateCluster, cluster_id, "duplicate cluster")
            if cluster.status != "possible":
                raise ResolveError(f"cluster {cluster_id} is {cluster.status}, not possible")
            decision = _decision(session, "promote_duplicate", cluster_id, "promote", actor, {"status": "possible"})
            cluster.status = "open"
            session.add(cluster)
            for mid in cluster.members:
                record_note(session, _memory(session, mid), actor, f"cluster {cluster_id}: promoted to likely duplicates",
                            decision_id=decision.decision_id)
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "promote_duplicate", "promote", {})

    # ---- conflicts -----------------------------------------------------------------------
    def resolve_conflict(self, conflict_id: str, action: str, actor: Actor, *, supersede: bool = False,
                         scopes: dict[str, dict[str, Any]] | None = None,
                         comment: str | None = None) -> DecisionResult:
        """Resolve a conflict: ``keep_a`` (B invalidated, or superseded by A with ``supersede``),
        ``keep_b``, ``keep_newer`` (the later-recorded fact kept, the older superseded by it), ``neither`` (both invalidated), ``not_a_conflict`` (remembered; never reopened),
        or ``narrow`` (both stay valid; ``scopes`` maps memory id -> {modulePath, appliesTo,
        doesNotApplyTo} to narrow each). Raises ResolveError and lifecycle errors."""
        if action not in CONFLICT_ACTIONS:
            raise ResolveError(f"unknown resolution {action.replace('_', '-')!r}; use one of "
                               f"{', '.join(a.replace('_', '-') for a in CONFLICT_ACTIONS)}")
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            conflict = _get(session, MemoryConflict, conflict_id, "conflict")
            if conflict.status == "possible" and action == "not_a_conflict":
                pass  # a suggestion is dismissed like an open conflict
            elif conflict.status == "possible":
                raise ResolveError(f"conflict {conflict_id} is only possible; promote it first "
                                   f"(memtui resolve {conflict_id} promote) or dismiss it (not-a-conflict)")
            elif conflict.status != "open":
                raise ResolveError(f"conflict {conflict_id} is {conflict.status}, not open")
            a, b = _memory(session, conflict.memory_a), _memory(session, conflict.memory_b)
            if action == "keep_newer":  # the proposed resolution of dated facts: the older is superseded
                side = newer_side(session, a.memory_id, b.memory_id)
                if side is None:
                    raise ResolveError(f"conflict {conflict_id}: neither memory is recorded later than the other as a "
                                       "fact that could replace it (same type, no less confidence, the older not "
                                       "high impact); use keep-a or keep-b")
                action, supersede = ("keep_a" if side[0] == a.memory_id else "keep_b"), True
            decision = _decision(session, "conflict", conflict_id, action, actor, {})
            payload: dict[str, Any] = {"conflictState": {a.memory_id: a.conflict_state, b.memory_id: b.conflict_state},
                                       "scopes": {}, "supersededBy": {}, "status": conflict.status}
            if action == "not_a_conflict":
                from memtui.similarity.tiers import pair_hash

                conflict.pair_hash = pair_hash(a.statement, b.statement)
            changes: dict[str, tuple[str, str]] = {}
            losers = {"keep_a": [b], "keep_b": [a], "neither": [a, b]}.get(action, [])
            winner = {"keep_a": a, "keep_b": b}.get(action)
            conflict.status = "not_a_conflict" if action == "not_a_conflict" else "resolved"
            conflict.resolution, conflict.resolved_by, conflict.resolved_at = action, actor.id, utcnow()
            session.add(conflict)
            session.flush()
            for m in (a, b):
                refresh_conflict_state(session, m)
            session.flush()
            why = f"conflict {conflict_id} resolved: {action.replace('_', ' ')}"
            for loser in losers:
                before = loser.state
                to = "superseded" if supersede and winner is not None and is_allowed(before, "superseded") \
                    else _retire_state(loser)
                transition(session, loser, to, actor, reason=why, decision_id=decision.decision_id)
                if to == "superseded":
                    payload["supersededBy"][loser.memory_id] = loser.superseded_by
                    loser.superseded_by = winner.memory_id
                    session.add(loser)
                changes[loser.memory_id] = (before, to)
            session.flush()
            for loser in losers:
                payload.setdefault("closed", []).extend(
                    close_conflicts_of_retired(session, loser, actor, decision.decision_id))
            if action == "narrow":
                scopes = scopes or {}
                if not any(scopes.get(m.memory_id) for m in (a, b)):
                    raise ResolveError("narrow needs the narrower scope of at least one memory")
                for m in (a, b):
                    new = scopes.get(m.memory_id)
                    if not new:
                        continue
                    if new.get("modulePath"):  # issue 21 item 2: canonical, so '..' cannot lead out
                        from memtui.domain.scopes import NotCanonical, canonical_module_path
                        try:
                            new = {**new, "modulePath": canonical_module_path(new["modulePath"])}
                        except NotCanonical as exc:
                            raise ResolveError(f"{m.memory_id}: {exc}") from None
                    if "modulePath" in new and not _narrower(m.module_path, new["modulePath"]):
                        raise ResolveError(f"{new['modulePath']!r} is not narrower than {m.memory_id}'s module path "
                                           f"{m.module_path or '(the whole repository)'}: narrowing must stay inside it")
                    if m.type == "architecture_decision" or m.impact == "high":
                        if actor.role != "lead":
                            raise ResolveError(f"{m.memory_id} is high impact; a lead must change its scope")
                    payload["scopes"][m.memory_id] = {"modulePath": m.module_path, "appliesTo": list(m.applies_to or []),
                                                      "doesNotApplyTo": list(m.does_not_apply_to or [])}
                    if "modulePath" in new:
                        m.module_path = new["modulePath"] or None
                    if "appliesTo" in new:
                        m.applies_to = list(new["appliesTo"])
                    if "doesNotApplyTo" in new:
                        m.does_not_apply_to = list(new["doesNotApplyTo"])
                    session.add(m)
            for m in (a, b):
                if m.memory_id not in changes:
                    record_note(session, m, actor, why + (" (scope narrowed)" if m.memory_id in payload["scopes"] else ""),
                                decision_id=decision.decision_id)
            decision.payload = payload
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "conflict", action, changes)

    def dismiss_conflicts(self, conflict_ids: list[str], actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """"Not a conflict" for several open or possible conflicts in one transaction and one decision (one
        undo restores them all; the comment applies to all). Each pair stays dismissed until either
        statement changes. Raises ResolveError naming the first conflict that is missing or decided;
        then nothing is written."""
        from memtui.similarity.tiers import pair_hash

        _refuse_secret(comment)
        ids = list(dict.fromkeys(conflict_ids))
        if not ids:
            raise ResolveError("no conflicts given")
        with Session(self.engine) as session, session.begin():
            decision = _decision(session, "conflict_batch", f"{len(ids)} conflicts", "not_a_conflict", actor, {})
            status: dict[str, str] = {}
            touched: dict[str, Memory] = {}
            for cid in ids:
                c = _get(session, MemoryConflict, cid, "conflict")
                if c.status not in ("open", "possible"):
                    raise ResolveError(f"conflict {cid} is {c.status}, not open")
                a, b = _memory(session, c.memory_a), _memory(session, c.memory_b)
                status[cid] = c.status
                c.status, c.resolution, c.resolved_by, c.resolved_at = "not_a_conflict", "not_a_conflict", actor.id, utcnow()
                c.pair_hash = pair_hash(a.statement, b.statement)
                session.add(c)
                touched[a.memory_id], touched[b.memory_id] = a, b
            session.flush()
            for m in touched.values():
                refresh_conflict_state(session, m)
                record_note(session, m, actor, f"not a conflict ({len(ids)} dismissed together)",
                            decision_id=decision.decision_id)
            decision.payload = {"status": status}
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "conflict_batch", "not_a_conflict", {})

    def promote_conflict(self, conflict_id: str, actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """A possible conflict becomes likely: opened, both memories held out of default recall until resolved."""
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            c = _get(session, MemoryConflict, conflict_id, "conflict")
            if c.status != "possible":
                raise ResolveError(f"conflict {conflict_id} is {c.status}, not possible")
            decision = _decision(session, "conflict_promote", conflict_id, "promote", actor, {"status": "possible"})
            c.status = "open"
            session.add(c)
            session.flush()
            for mid in (c.memory_a, c.memory_b):
                m = _memory(session, mid)
                refresh_conflict_state(session, m)
                record_note(session, m, actor, f"conflict {conflict_id} promoted to likely by a reviewer",
                            decision_id=decision.decision_id)
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "conflict_promote", "promote", {})

    # ---- compaction ----------------------------------------------------------------------
    def accept_compaction(self, proposal_id: str, actor: Actor, *, statement: str | None = None,
                          keep: list[str] | None = None, activate: bool = True,
                          comment: str | None = None) -> DecisionResult:
        """Accept a compaction proposal: a new memory with the (edited) statement and the union of
        the members' evidence. The new memory becomes active when ``activate``, every member was
        already reviewed (active or approved) and the invariants allow (a broadened scope needs a
        lead); otherwise it is a candidate in the review queue and the proposal ``pending_review``.
        Members (except those in ``keep``, narrower ones still useful) are superseded only when the
        new memory becomes active, now or when a reviewer approves it: until then they stay in use
        (issue 10, item 6; the rule lives in :mod:`memtui.review.lifecycle`). Raises ResolveError and lifecycle errors
        (SecretInComment when the edited statement holds a secret, issue 9)."""
        from memtui.safety.guard import refuse_secret_comment

        refuse_secret_comment(statement, "edited statement")
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            proposal = _get(session, CompactionProposal, proposal_id, "compaction proposal")
            if proposal.status != "open":
                raise ResolveError(f"proposal {proposal_id} is {proposal.status}, not open")
            if proposal.broadens_scope and actor.role != "lead":
                raise ResolveError(f"proposal {proposal_id} broadens the scope of its members; a lead must accept it")
            text = (statement if statement is not None else proposal.proposed_statement).strip()
            if not text:
                raise ResolveError("the compacted statement cannot be empty")
            members = [_memory(session, m) for m in proposal.members]
            inside = set(proposal.members)
            for m in members:  # conflicts among the members themselves (a log's values) end with it
                partners = _open_conflict_partners(session, m.memory_id) if m.conflict_state == "open" else set()
                if m.conflict_state == "open" and (not partners or partners - inside):
                    raise ResolveError(f"{m.memory_id} is in an open conflict; compaction never includes it")
            keep = set(keep or [])
            unknown = keep - set(proposal.members)
            if unknown:
                raise ResolveError(f"--keep {', '.join(sorted(unknown))}: not a member of {proposal_id}")
            unreviewed = [m.memory_id for m in members if m.state not in ("active", "approved")]
            if unreviewed:
                activate = False  # unreviewed claims never become active through a compaction
            decision = _decision(session, "compaction", proposal_id, "accept", actor, {})
            new_id = "mem_compact_" + hashlib.sha256(proposal_id.encode()).hexdigest()[:12]
            if session.get(Memory, new_id) is not None:
                new_id += "_" + decision.decision_id[-6:]
            now = utcnow()
            new = Memory(memory_id=new_id, logical_memory_id=new_id, type=proposal.proposed_type, statement=text,
                         tenant_id=proposal.tenant_id, repository_id=proposal.repository_id,
                         module_path=proposal.module_path, state="candidate",
                         confidence=max(m.confidence for m in members), review_state="pending", origin="human",
                         proposer_type="compaction", proposer_id=proposal_id,
                         tags=sorted({t for m in members for t in (m.tags or [])}),
                         invalidation_policy=[p for m in members for p in (m.invalidation_policy or [])],
                         created_at=now)
            evidence: list[Evidence] = []
            seen: set[tuple] = set()
            for m in members:
                for e in load_evidence(session, m.memory_id):
                    if _ev_key(e) in seen:
                        continue
                    seen.add(_ev_key(e))
                    evidence.append(Evidence(memory_id=new_id, ordinal=len(evidence),
                                             **{f: getattr(e, f) for f in _COPY_FIELDS}))
            create_memory(session, new, evidence, actor, reason=f"compaction {proposal_id} accepted: "
                          f"{', '.join(proposal.members)}", decision_id=decision.decision_id)
            decision.payload = {"newMemory": new_id, "statement": text, "keep": sorted(keep)}
            proposal.status, proposal.new_memory_id = "pending_review", new_id
            proposal.decided_at, proposal.decided_by = now, actor.id
            session.add_all([decision, proposal])
            session.flush()
            before = {m.memory_id: m.state for m in members}
            changes: dict[str, tuple[str, str]] = {}
            if activate:  # the lifecycle supersedes the members (but the kept ones) as it becomes active
                transition(session, new, "active", actor, reason=f"compaction {proposal_id} accepted",
                           review_state="approved", decision_id=decision.decision_id)
                changes[new_id] = ("candidate", "active")
            for m in members:
                if m.state != before[m.memory_id]:
                    changes[m.memory_id] = (before[m.memory_id], m.state)
                elif m.memory_id in keep:
                    record_note(session, m, actor, f"kept beside compaction {new_id}", decision_id=decision.decision_id)
                else:
                    record_note(session, m, actor, f"compaction {proposal_id} pending: stays in use until {new_id} "
                                "is approved", decision_id=decision.decision_id)
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "compaction", "accept", changes, new_id)

    def reject_compaction(self, proposal_id: str, actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """Reject a compaction proposal; its members stay as they are and it is not proposed again."""
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            proposal = _get(session, CompactionProposal, proposal_id, "compaction proposal")
            if proposal.status != "open":
                raise ResolveError(f"proposal {proposal_id} is {proposal.status}, not open")
            decision = _decision(session, "compaction", proposal_id, "reject", actor, {})
            for mid in proposal.members:
                record_note(session, _memory(session, mid), actor, f"compaction {proposal_id} rejected",
                            decision_id=decision.decision_id)
            proposal.status, proposal.decided_at, proposal.decided_by = "rejected", utcnow(), actor.id
            session.add(proposal)
            _commented(decision, comment)
            return DecisionResult(decision.decision_id, "compaction", "reject", {})

    # ---- undo ----------------------------------------------------------------------------
    def undo(self, decision_id: str, actor: Actor, *, comment: str | None = None) -> DecisionResult:
        """Undo a multi-memory decision with compensating events, restoring what it changed.

        Refused when any memory it touched has changed since (a later event), when it was
        already undone, or when someone other than its author (or a lead) asks."""
        _refuse_secret(comment)
        with Session(self.engine) as session, session.begin():
            d = _get(session, ReviewDecision, decision_id, "decision")
            if d.undone_by:
                raise ResolveError(f"{decision_id} was already undone by {d.undone_by}")
            if d.actor_id != actor.id and actor.role != "lead":
                raise ResolveError(f"{decision_id} was made by {d.actor_id}; only they or a lead can undo it")
            events = list(session.exec(select(StateHistory).where(StateHistory.decision_id == decision_id)
                                       .order_by(StateHistory.event_id)))
            touched = {e.memory_id for e in events}
            # the latest state this decision gave each memory must still be its state (notes by later
            # decisions do not matter; a later state change means someone built on it: refuse)
            final: dict[str, str] = {}
            for e in events:
                if e.from_state != e.to_state:
                    final[e.memory_id] = e.to_state
            for mid, state in sorted(final.items()):
                now_state = _memory(session, mid).state
                if now_state != state:
                    raise ResolveError(f"{mid} is {now_state} now, no longer {state} as {decision_id} left it; "
                                       "undo the later decision first")
            undo_id = new_event_id("dec")
            changes: dict[str, tuple[str, str]] = {}
            p = d.payload or {}
            # state changes back, newest first
            for e in reversed(events):
                m = _memory(session, e.memory_id)
                if e.from_state is None:  # a memory the decision created: archived, never deleted
                    transition(session, m, "archived", actor, reason=f"undo of {decision_id}: created by it",
                               compensates=e.event_id, decision_id=undo_id)
                    changes[m.memory_id] = (e.to_state, "archived")
                elif e.from_state != e.to_state and m.state == e.to_state:
                    transition(session, m, e.from_state, actor, reason=f"undo of {decision_id} ({e.reason})",
                               compensates=e.event_id, review_state=e.review_state_before, decision_id=undo_id)
                    changes[m.memory_id] = (e.to_state, e.from_state)
                else:
                    record_note(session, m, actor, f"undo of {decision_id} ({e.reason})", compensates=e.event_id,
                                decision_id=undo_id)
            for cid in p.get("closed", []) if d.kind == "merge" else []:
                other = session.get(MemoryConflict, cid)
                if other is not None and other.resolution == "member_retired":
                    other.status, other.resolution, other.resolved_by, other.resolved_at = "open", None, None, None
                    session.add(other)
                    session.flush()
                    for mid in (other.memory_a, other.memory_b):
                        refresh_conflict_state(session, _memory(session, mid))
            if d.kind == "merge":
                canon = _memory(session, p["canonical"])
                canon.statement, canon.confidence, canon.tags = p["statement"], p["confidence"], p["tags"]
                from memtui.clock import parse_time

                canon.last_used_at = parse_time(p["lastUsedAt"]) if p.get("lastUsedAt") else None
                for eid in p.get("addedEvidence", []):
                    row = session.get(Evidence, eid)
                    if row is not None:
                        session.delete(row)  # the copies this merge added; the originals stay on their memories
                for mid in touched:
                    m = _memory(session, mid)
                    if m.superseded_by == canon.memory_id and m.state != "superseded":
                        m.superseded_by = None
                        session.add(m)
                session.add(canon)
                cluster = session.get(DuplicateCluster, d.subject_id)
                if cluster:
                    cluster.status, cluster.decided_at = "open", None
                    session.add(cluster)
            elif d.kind in ("not_duplicates", "not_duplicates_batch"):
                for a, b in p.get("pairs", []):
                    row = session.get(NotDuplicatePair, (a, b))
                    if row is not None:
                        session.delete(row)
                for cid, before in (p.get("status") or {d.subject_id: "open"}).items():
                    cluster = session.get(DuplicateCluster, cid)
                    if cluster:
                        cluster.status, cluster.decided_at = before, None
                        session.add(cluster)
            elif d.kind == "promote_duplicate":
                cluster = session.get(DuplicateCluster, d.subject_id)
                if cluster is not None and cluster.status == "open":
                    cluster.status = "possible"
                    session.add(cluster)
            elif d.kind in ("conflict_batch", "conflict_promote"):
                restore = p["status"] if d.kind == "conflict_batch" else {d.subject_id: "possible"}
                for cid, before in restore.items():
                    c = session.get(MemoryConflict, cid)
                    c.status, c.resolution, c.resolved_by, c.resolved_at = before, None, None, None
                    session.add(c)
                session.flush()
                for cid in restore:
                    c = session.get(MemoryConflict, cid)
                    for mid in (c.memory_a, c.memory_b):
                        refresh_conflict_state(session, _memory(session, mid))
            elif d.kind == "conflict":
                for cid in p.get("closed", []):
                    other = session.get(MemoryConflict, cid)
                    if other is not None and other.resolution == "member_retired":
                        other.status, other.resolution, other.resolved_by, other.resolved_at = "open", None, None, None
                        session.add(other)
                conflict = session.get(MemoryConflict, d.subject_id)
                conflict.status, conflict.resolution, conflict.resolved_by, conflict.resolved_at = (
                    p.get("status", "open"), None, None, None)
                session.add(conflict)
                for mid, scope in p.get("scopes", {}).items():
                    m = _memory(session, mid)
                    m.module_path, m.applies_to, m.does_not_apply_to = (
                        scope["modulePath"], scope["appliesTo"], scope["doesNotApplyTo"])
                    session.add(m)
                for mid, prev in p.get("supersededBy", {}).items():
                    m = _memory(session, mid)
                    m.superseded_by = prev
                    session.add(m)
                session.flush()
                for cid in [d.subject_id] + p.get("closed", []):
                    c = session.get(MemoryConflict, cid)
                    for mid in (c.memory_a, c.memory_b):
                        refresh_conflict_state(session, _memory(session, mid))
            elif d.kind == "compaction":
                proposal = session.get(CompactionProposal, d.subject_id)
                for mid in proposal.members:
                    m = _memory(session, mid)
                    if m.state != "superseded" and m.superseded_by == p.get("newMemory"):
                        m.superseded_by = None
                        session.add(m)
                proposal.status, proposal.decided_at, proposal.decided_by = "open", None, None
                session.add(proposal)
            d.undone_by = undo_id
            session.add(d)
            session.add(ReviewDecision(decision_id=undo_id, kind="undo", subject_id=decision_id, action="undo",
                                       actor_id=actor.id, payload={"comment": comment} if comment else {},
                                       created_at=utcnow()))
            return DecisionResult(undo_id, "undo", d.kind, changes)
