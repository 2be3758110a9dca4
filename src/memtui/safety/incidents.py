"""Secret incidents (design §22.4, issue 9 item 1): list them for their owners, purge a memory.

The incident flow: a memory found holding a secret is blocked (never recalled, never exported,
never shown unredacted), audited (``secret_blocked``), listed for its owner (the proposer) in the
health report by :func:`secret_incidents`, and removed only by an explicit :func:`purge`, which
deletes the memory and every row about it in one transaction, keeps its ``SecretFinding`` rows
(type and hash, no secret) and writes a ``purge`` audit event naming the recalls (usage events)
and exports (``export`` audit events) that included it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, or_
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import iso
from memtui.domain.invariants import Actor, LifecycleError
from memtui.governance.audit import audit
from memtui.governance.visibility import can_see
from memtui.safety.guard import refuse_secret_comment
from memtui.store.models import (AuditEvent, CompactionProposal, DuplicateCluster, Evidence, HarmEvent, Memory,
                                 MemoryConflict, NotDuplicatePair, ReviewClaim, Revalidation, SecretFinding,
                                 StateHistory, UsageEvent)

__all__ = ["PurgeRefused", "PurgeResult", "purge", "secret_incidents", "record_export"]


class PurgeRefused(LifecycleError):
    """A purge that cannot be carried out; the message says why. Nothing was deleted."""


@dataclass(frozen=True)
class PurgeResult:
    """What a purge removed and where the memory had gone: ``recalls`` as (usage id, context pack,
    workflow run, when) and ``exports`` as (audit id, export kind, when)."""

    memory_id: str
    audit_id: str
    deleted: dict[str, int]
    recalls: tuple[tuple[str, str | None, str | None, str], ...]
    exports: tuple[tuple[str, str, str], ...]


def secret_incidents(session: Session, viewer=None) -> list[dict]:
    """Blocked memories with secret findings, for their owner: ``memoryId``, ``repositoryId``,
    ``owner`` (the proposer, else whoever imported or wrote it), ``types``, ``foundAt`` (first
    finding), ``purged`` (the memory is gone, its findings kept). Oldest first. ``viewer`` (an
    Actor): only memory inside its scopes, purged ones only for an unrestricted viewer."""
    findings: dict[str, list[SecretFinding]] = {}
    for f in session.exec(select(SecretFinding).order_by(SecretFinding.found_at, SecretFinding.finding_id)):
        findings.setdefault(f.memory_id, []).append(f)
    if not findings:
        return []
    ids = sorted(findings)
    memories = {m.memory_id: m for m in session.exec(select(Memory).where(Memory.memory_id.in_(ids)))}
    creators = {h.memory_id: h.actor_id for h in session.exec(
        select(StateHistory).where(StateHistory.memory_id.in_(ids), StateHistory.from_state.is_(None)))}
    out = []
    for mid, fs in findings.items():
        m = memories.get(mid)
        if viewer is not None and viewer.scopes is not None and (m is None or not can_see(session, viewer, m)):
            continue
        if m is not None and m.state != "blocked":
            continue  # findings of a memory no longer blocked (archived after review) are not open incidents
        out.append({
            "memoryId": mid, "repositoryId": m.repository_id if m else None,
            "owner": (m.proposer_id or creators.get(mid)) if m else None,
            "types": list(dict.fromkeys(f.secret_type for f in fs)), "foundAt": iso(fs[0].found_at),
            "purged": m is None,
        })
    out.sort(key=lambda d: (d["foundAt"], d["memoryId"]))
    return out


def record_export(engine: Engine, kind: str, memory_ids: Iterable[str], actor_id: str, **detail) -> None:
    """One ``export`` audit event listing the memory ids an export included (so a purge can name it)."""
    with Session(engine) as session, session.begin():
        audit(session, "export", actor_id, None, exportKind=kind, memoryIds=sorted(set(memory_ids)), **detail)


def purge(engine: Engine, memory_id: str, actor: Actor, comment: str, *, force: bool = False) -> PurgeResult:
    """Delete ``memory_id`` with its evidence, history, revalidation, usage and harm events, review
    claims, conflicts, not-duplicate pairs, duplicate clusters and compaction proposals naming it,
    in ONE transaction; keep its secret findings; write a ``purge`` audit event with the recalls and
    exports that included it. Refused (:class:`PurgeRefused`, nothing deleted) without a comment,
    with a comment holding a secret, or for a memory that is not blocked unless ``force``."""
    if not (comment or "").strip():
        raise PurgeRefused("a purge needs --comment WHY (it is audited)")
    refuse_secret_comment(comment)
    with Session(engine) as session, session.begin():
        m = session.get(Memory, memory_id)
        if m is None:
            raise PurgeRefused(f"no memory {memory_id!r} in the store")
        from memtui.governance.integrity import note

        note(session, "memory", [memory_id])  # sealed as gone at commit (issue 21 item 6)
        from memtui.domain.invariants import MemoryFacts, check_rewrite

        check_rewrite(MemoryFacts(memory_id=m.memory_id, type=m.type, state=m.state, repository_id=m.repository_id,
                                  impact=m.impact), actor, "purge")  # issue 21 item 1: --force is no way round
        if m.state != "blocked" and not force:
            raise PurgeRefused(f"{memory_id} is {m.state}, not blocked; purge deletes history — block it first "
                               "(memtui decide ID block) or pass --force")
        recalls = tuple((u.usage_id, u.context_pack_id, u.workflow_run_id, iso(u.created_at)) for u in session.exec(
            select(UsageEvent).where(UsageEvent.memory_id == memory_id).order_by(UsageEvent.created_at,
                                                                                  UsageEvent.usage_id)))
        exports = tuple((a.audit_id, str(a.detail.get("exportKind")), iso(a.created_at))
                        for a in session.exec(select(AuditEvent).where(AuditEvent.kind == "export")
                                              .order_by(AuditEvent.audit_id))
                        if memory_id in (a.detail or {}).get("memoryIds", []))
        deleted: dict[str, int] = {}

        def gone(name: str, stmt) -> None:
            deleted[name] = session.execute(stmt).rowcount or 0

        gone("evidence", delete(Evidence).where(Evidence.memory_id == memory_id))
        gone("revalidation", delete(Revalidation).where(Revalidation.memory_id == memory_id))
        gone("usageEvents", delete(UsageEvent).where(UsageEvent.memory_id == memory_id))
        gone("harmEvents", delete(HarmEvent).where(HarmEvent.memory_id == memory_id))
        gone("reviewClaims", delete(ReviewClaim).where(ReviewClaim.memory_id == memory_id))
        gone("conflicts", delete(MemoryConflict).where(or_(MemoryConflict.memory_a == memory_id,
                                                           MemoryConflict.memory_b == memory_id)))
        gone("notDuplicatePairs", delete(NotDuplicatePair).where(or_(NotDuplicatePair.memory_a == memory_id,
                                                                     NotDuplicatePair.memory_b == memory_id)))
        clusters = [c.cluster_id for c in session.exec(select(DuplicateCluster)) if memory_id in (c.members or [])]
        gone("duplicateClusters", delete(DuplicateCluster).where(DuplicateCluster.cluster_id.in_(clusters)))
        proposals = [p.proposal_id for p in session.exec(select(CompactionProposal))
                     if memory_id in (p.members or []) or p.new_memory_id == memory_id]
        gone("compactionProposals", delete(CompactionProposal).where(CompactionProposal.proposal_id.in_(proposals)))
        gone("history", delete(StateHistory).where(StateHistory.memory_id == memory_id))
        session.flush()
        gone("memory", delete(Memory).where(Memory.memory_id == memory_id))
        event = audit(session, "purge", actor.id, memory_id, comment=comment, state=m.state, forced=force,
                      deleted=deleted, recalls=[{"usageId": u, "contextPackId": p, "workflowRunId": w, "at": t}
                                                for u, p, w, t in recalls],
                      exports=[{"auditId": a, "kind": k, "at": t} for a, k, t in exports])
        return PurgeResult(memory_id, event.audit_id, deleted, recalls, exports)
