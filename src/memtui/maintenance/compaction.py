"""The compaction job (issue 4; seed 000 §12): propose one statement for groups of related,
fresh, non-conflicting memories of one scope. Proposals only: a reviewer accepts, edits or rejects.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.compaction import CompactionCandidate, log_groups, propose, propose_log_compactions
from memtui.domain.temporal import observation_order
from memtui.maintenance.jobs import JobResult, job_transaction, sync_proposals
from memtui.store.models import CompactionProposal, DuplicateCluster, Evidence, Memory

STALE_STATUSES = ("changed", "deleted", "unverifiable")


def propose_compactions(engine: Engine, now: datetime, *, repository_id: str | None = None,
                        dry_run: bool = False) -> JobResult:
    """Write new compaction proposals; open proposals whose group no longer qualifies become ``stale``;
    an open one found again takes the statement proposed now (so a second run changes nothing).

    A proposal already decided (accepted or rejected) is never proposed again. Idempotent.
    """
    with job_transaction(engine, "compaction", repository_id=repository_id, dry_run=dry_run, clock=now) as (session, result):
        q = select(Memory).where(Memory.state.in_(["candidate", "approved", "active"]))
        if repository_id is not None:
            q = q.where(Memory.repository_id == repository_id)
        memories = list(session.exec(q.order_by(Memory.memory_id)))
        ids = {m.memory_id for m in memories}
        anchors: dict[str, set[str]] = defaultdict(set)
        stale: set[str] = set()
        for mid, path, symbol, status in session.exec(
                select(Evidence.memory_id, Evidence.path, Evidence.symbol, Evidence.status)):
            if mid not in ids:
                continue
            if path:
                anchors[mid].add(path)
            if symbol:
                anchors[mid].add(symbol)
            if status in STALE_STATUSES:
                stale.add(mid)
        clustered = {m for c in session.exec(select(DuplicateCluster).where(DuplicateCluster.status == "open"))
                     for m in c.members}
        # an accepted compaction waiting for review holds its members and its new memory (issue 10, item 6)
        pending = {m for p in session.exec(select(CompactionProposal).where(
            CompactionProposal.status == "pending_review")) for m in [*p.members, p.new_memory_id]}
        memories = [m for m in memories if m.memory_id not in pending]
        candidates = [CompactionCandidate(
            m.memory_id, m.type, m.state, m.statement, m.tenant_id, m.repository_id, m.module_path,
            frozenset(anchors[m.memory_id]), stale=m.memory_id in stale, conflicted=m.conflict_state == "open",
            in_duplicate_cluster=m.memory_id in clustered, created_at=m.created_at,
            order=observation_order(m.tags)) for m in memories]
        logs = propose_log_compactions(candidates)  # log-like groups first: one proposal each, not pairs
        in_logs = {mid for p in logs for mid in p.members}
        proposals = sorted(logs + propose([c for c in candidates if c.memory_id not in in_logs]),
                           key=lambda p: p.proposal_id)
        result.selected = len(candidates)
        existing = {p.proposal_id: p for p in session.exec(select(CompactionProposal))}
        proposed = {p.proposal_id: p for p in proposals}

        def build(pid: str) -> CompactionProposal:
            p = proposed[pid]
            return CompactionProposal(
                proposal_id=pid, tenant_id=p.tenant_id, repository_id=p.repository_id, module_path=p.module_path,
                members=list(p.members), proposed_statement=p.statement, proposed_type=p.type,
                shared=list(p.shared), broadens_scope=p.broadens_scope, status="open", job_id=result.job_id,
                created_at=now)

        new = [{"proposalId": pid, "members": list(proposed[pid].members)} for pid in sync_proposals(
            session, result, existing, proposed, build, repository_id=repository_id, dry_run=dry_run)]
        if not dry_run:  # an open proposal found again takes the text proposed now (a better rule, edited members)
            for pid, row in existing.items():
                if pid in proposed and row.status == "open" and row.proposed_statement != proposed[pid].statement:
                    row.proposed_statement = proposed[pid].statement
                    session.add(row)
                    result.updated += 1
        result.changes = new
        result.summary = {"proposals": len(proposals), "new": len(new)}
    return result


def compaction_records(engine: Engine) -> list[dict[str, Any]]:
    """Every compaction proposal for the report, open first, with the union of its members' evidence."""
    with Session(engine) as session:
        rows = list(session.exec(select(CompactionProposal)))
        evidence: dict[str, list[str]] = defaultdict(list)
        members = {m for r in rows for m in r.members}
        for mid, path, symbol, line_start, line_end in session.exec(
                select(Evidence.memory_id, Evidence.path, Evidence.symbol, Evidence.line_start, Evidence.line_end)
                .order_by(Evidence.memory_id, Evidence.ordinal)):
            if mid in members:
                ref = path or symbol or ""
                if path and line_start is not None:
                    ref += f":{line_start}-{line_end}"
                if symbol and path:
                    ref += f" ({symbol})"
                evidence[mid].append(ref)
    rows.sort(key=lambda r: (r.status != "open", r.proposal_id))
    out = []
    for r in rows:
        union = sorted({e for m in r.members for e in evidence.get(m, [])})
        out.append({
            "proposalId": r.proposal_id, "status": r.status,
            "scope": {"tenantId": r.tenant_id, "repositoryId": r.repository_id, "modulePath": r.module_path},
            "members": list(r.members), "proposedStatement": r.proposed_statement, "type": r.proposed_type,
            "shared": list(r.shared), "evidence": union, "broadensScope": r.broadens_scope,
            "requiresLead": r.broadens_scope,
            **({"newMemoryId": r.new_memory_id} if r.new_memory_id else {}),
        })
    return out


def log_group_of(memories: list[Memory]) -> dict[str, int]:
    """memory id -> the number of its log-like group (:func:`memtui.domain.compaction.log_groups`), for
    the memories in one; the dedupe and conflict jobs never pair two members of one group (issue 10,
    item 5: one compaction proposal instead of pairwise findings)."""
    groups = log_groups([CompactionCandidate(m.memory_id, m.type, m.state, m.statement, m.tenant_id,
                                             m.repository_id, m.module_path) for m in memories])
    return {c.memory_id: n for n, group in enumerate(groups) for c in group}
