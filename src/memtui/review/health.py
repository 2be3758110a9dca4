"""One health model (issue 11, item 6; seed 000 §19.2-19.3): what the TUI health screen, ``memtui health
[--json]``, the HTTP API's health endpoint and ``memory-health-report.yaml`` all show.

:func:`build_health` reads the store once (read-only, one session) and returns a
:class:`HealthModel`; :func:`health_dict` turns it into the camelCase ``memoryHealth`` rows the CLI
prints and the report writes. Every "action required" sentence is written here and nowhere else,
so the three outputs cannot disagree.

Per repository (None: org-wide memory), besides the counts per state:

* ``stale`` — live memory whose latest revalidation is not ``valid``;
* ``conflicted`` — memory in an open conflict;
* ``highValue`` — active memory of quality band ``high`` (:func:`memtui.domain.quality.quality`);
* ``highUse`` — memory used at least :data:`HIGH_USE_MIN` times in the last :data:`HIGH_USE_DAYS`
  days (usage events), most used first;
* ``harmful`` — memory not retired with at least one harm event (seed 000 §16.3);
* ``policyViolations`` — active memory breaking the evidence or scope invariant (design,
  invariants 1-2), high-impact live memory made live by anyone but a human lead (invariant 6; an
  import arriving approved and an undo excepted), and memory holding a secret finding that is not
  blocked or archived (invariant 5);
* ``reviewBacklog`` — the queue's size and how long its items have waited (days since the event
  that put each in its queue state, undos not counted; its ``createdAt`` when it arrived in it), oldest and median.

Limits: id lists inside action sentences name at most :data:`NAMED` ids ("and N more").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from statistics import median

from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.clock import iso, utcnow
from memtui.domain.invariants import (Actor, EvidenceFacts, InvariantViolation, MemoryFacts, check_evidence,
                                      check_scope, is_high_impact)
from memtui.domain.states import ALL_STATES, QUEUE_STATES
from memtui.governance.visibility import restrict
from memtui.review.lifecycle import RETIRED_STATES
from memtui.store.models import Evidence, HarmEvent, Memory, Revalidation, SecretFinding, StateHistory, UsageEvent

HIGH_USE_DAYS = 30
HIGH_USE_MIN = 5
BACKLOG_MAX_DAYS = 14  # an item waiting longer than this is an action of its own
NAMED = 5
LIVE = ("active", "approved", "needs_review", "challenged", "candidate")
QUEUE = tuple(s.value for s in QUEUE_STATES)


@dataclass(frozen=True)
class Backlog:
    """The review queue of one repository: how many wait, the oldest (id, days) and the median days."""

    waiting: int
    oldest_days: int | None = None
    oldest_memory_id: str | None = None
    median_days: float | None = None


@dataclass(frozen=True)
class RepositoryHealthModel:
    """Health of one repository (None: org-wide). Id tuples are sorted by id unless said otherwise."""

    repository_id: str | None
    by_state: dict[str, int]
    stale: tuple[str, ...]
    conflicted: tuple[str, ...]
    high_value: tuple[str, ...]
    high_use: tuple[tuple[str, int], ...]  # (memory id, uses in the window), most used first
    harmful: tuple[tuple[str, int, datetime, str], ...]  # (memory id, harm events, latest, state)
    violations: tuple[tuple[str, str], ...]  # (memory id, what it breaks)
    backlog: Backlog
    actions: tuple[str, ...]

    @property
    def total(self) -> int:
        """All memories of the repository, any state."""
        return sum(self.by_state.values())


@dataclass(frozen=True)
class HealthModel:
    """The store's health as ``viewer`` may see it, at ``generated_at``."""

    generated_at: datetime
    repositories: tuple[RepositoryHealthModel, ...]
    secret_incidents: tuple[dict, ...] = field(default_factory=tuple)

    def actions(self) -> list[tuple[str | None, str]]:
        """Every action required, as (repository id, sentence), in repository then priority order."""
        return [(r.repository_id, a) for r in self.repositories for a in r.actions]


def _aware(dt: datetime) -> datetime:
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt


def _many(n: int, one: str = "memory", many: str = "memories") -> str:
    """``1 memory`` / ``3 memories``: an action's count with its noun."""
    return f"{n} {one if n == 1 else many}"


def _named(ids: list[str]) -> str:
    shown = ", ".join(ids[:NAMED])
    return shown + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")


def _actions(s: dict[str, int], stale: list[str], conflicted: list[str], high_use: list[tuple[str, int]],
             harmful: list, violations: list[tuple[str, str]], backlog: Backlog,
             waiting_states: dict[str, str], validated: dict[str, datetime | None]) -> list[str]:
    """The action-required sentences of one repository, most urgent first (the one place they are written)."""
    out = []
    if violations:
        out.append(f"fix {_many(len(violations), 'policy violation', 'policy violations')}: {_named(sorted({m for m, _ in violations}))}")
    if s["challenged"]:
        out.append(f"look at {_many(s['challenged'], 'challenged memory', 'challenged memories')} (harm or contradiction reported)")
    unreviewed = [mid for mid, _n, last, state in harmful if state in ("active", "approved")
                  and (validated.get(mid) is None or _aware(validated[mid]) < _aware(last))]
    if unreviewed:
        out.append(f"re-review {_many(len(unreviewed))} still in use after harm was reported: {_named(unreviewed)}")
    flagged = {*stale, *conflicted} | {m for m, st in waiting_states.items() if st in ("needs_review", "challenged")}
    hot = [mid for mid, _n in high_use if mid in flagged]
    if hot:
        out.append(f"review {_many(len(hot), 'high-use memory', 'high-use memories')} first (stale, conflicted or waiting): {_named(hot)}")
    if s["needs_review"]:
        out.append(f"review {_many(s['needs_review'])} that need{'s' if s['needs_review'] == 1 else ''} review")
    if conflicted:
        out.append(f"resolve conflicts of {_many(len(conflicted))}")
    in_use_stale = [m for m in stale if waiting_states.get(m) not in ("needs_review", "challenged")]
    if in_use_stale:
        out.append(f"revalidate {_many(len(in_use_stale), 'stale memory', 'stale memories')}: {_named(in_use_stale)}")
    if s["candidate"]:
        out.append(f"decide {_many(s['candidate'], 'pending candidate', 'pending candidates')}")
    if s["expired"]:
        out.append(f"archive or renew {_many(s['expired'], 'expired memory', 'expired memories')}")
    if backlog.oldest_days is not None and backlog.oldest_days > BACKLOG_MAX_DAYS:
        out.append(f"work the review backlog: {backlog.oldest_memory_id} has waited {backlog.oldest_days} days "
                   f"(median {backlog.median_days:g})")
    return out


def _active(query, joined, session: Session, viewer: Actor | None):
    """``query`` (over a table whose ``memory_id`` is ``joined``) narrowed to the active memories
    ``viewer`` may see: one query for all of them, not one per 500 ids (issue 22: 1,000,000 memories)."""
    return restrict(query.join(Memory, Memory.memory_id == joined).where(Memory.state == "active"), session, viewer)


def _active_bands(session: Session, viewer: Actor | None, evidence: dict[str, list]) -> dict[str, str]:
    """The quality band (domain.quality, seed 000 §17) of each active memory ``viewer`` sees, from column
    reads only (the same inputs as :func:`memtui.maintenance.assess.quality_inputs`); ``evidence``:
    memory id -> its evidence rows (``type``, ``status``), in ordinal order."""
    from collections import Counter

    from memtui.domain.quality import quality, quality_input

    usage: dict[str, Counter] = defaultdict(Counter)
    for mid, outcome, n in session.exec(_active(select(UsageEvent.memory_id, UsageEvent.outcome, func.count()),
                                                UsageEvent.memory_id, session, viewer)
                                        .group_by(UsageEvent.memory_id, UsageEvent.outcome)):
        usage[mid][outcome] = n
    harm = dict(session.exec(_active(select(HarmEvent.memory_id, func.count()), HarmEvent.memory_id, session, viewer)
                             .group_by(HarmEvent.memory_id)).all())
    out: dict[str, str] = {}
    for m in session.exec(restrict(select(Memory.memory_id, Memory.statement, Memory.state, Memory.confidence,
                                          Memory.review_state, Memory.conflict_state, Memory.repository_id,
                                          Memory.module_path).where(Memory.state == "active"), session, viewer)):
        q = quality(quality_input(m, evidence.get(m.memory_id, []), usage.get(m.memory_id), harm.get(m.memory_id, 0)))
        out[m.memory_id] = q.band
    return out


def build_health(engine: Engine, viewer: Actor | None = None, now: datetime | None = None) -> HealthModel:
    """The health of the memory ``viewer`` may see (None: all) at ``now`` (default: the clock).
    Repositories sorted by id, org-wide last. Read-only."""
    from memtui.safety.incidents import secret_incidents

    now = now or utcnow()
    with Session(engine) as session:
        q = restrict(select(Memory.memory_id, Memory.repository_id, Memory.state, Memory.conflict_state,
                            Memory.type, Memory.impact, Memory.origin, Memory.last_validated_at,
                            Memory.created_at), session, viewer)
        rows = list(session.exec(q.order_by(Memory.memory_id)))
        reval = {mid: status for mid, status in session.exec(select(Revalidation.memory_id, Revalidation.status))}
        since = now - timedelta(days=HIGH_USE_DAYS)
        uses = dict(session.exec(select(UsageEvent.memory_id, func.count())
                                 .where(UsageEvent.created_at >= since).group_by(UsageEvent.memory_id)).all())
        harm = {mid: (n, last) for mid, n, last in session.exec(
            select(HarmEvent.memory_id, func.count(), func.max(HarmEvent.created_at)).group_by(HarmEvent.memory_id))}
        secrets = set(session.exec(select(SecretFinding.memory_id).distinct()).all())
        evidence: dict[str, list] = defaultdict(list)  # of the active memories, in ordinal order
        for e in session.exec(_active(select(Evidence.memory_id, Evidence.type, Evidence.status,
                                             Evidence.repository_id), Evidence.memory_id, session, viewer)
                              .order_by(Evidence.memory_id, Evidence.ordinal)):
            evidence[e.memory_id].append(e)
        facts = {r[0]: MemoryFacts(memory_id=r[0], type=r[4], state=r[2], repository_id=r[1], impact=r[5],
                                   origin=r[6], conflict_state=r[3],
                                   evidence=tuple(EvidenceFacts(e.type, e.status, e.repository_id)
                                                  for e in evidence.get(r[0], ())))
                 for r in rows if r[2] in ("active", "approved")}
        high = {mid for mid, f in facts.items() if is_high_impact(f)}
        approvals: dict[str, StateHistory] = {}
        # the event that made each high-impact memory live (not an undo): one query over the live memories
        for e in session.exec(restrict(select(StateHistory).join(Memory, Memory.memory_id == StateHistory.memory_id)
                                       .where(Memory.state.in_(("active", "approved"))), session, viewer).where(
                StateHistory.to_state.in_(("active", "approved")), StateHistory.from_state.is_not(None),
                StateHistory.from_state != StateHistory.to_state, StateHistory.compensates.is_(None))
                .order_by(StateHistory.event_id)):
            if e.memory_id in high:
                approvals[e.memory_id] = e
        entered = dict(session.exec(
            select(StateHistory.memory_id, func.max(StateHistory.created_at))
            .join(Memory, Memory.memory_id == StateHistory.memory_id)
            .where(Memory.state.in_(QUEUE), StateHistory.to_state == Memory.state,
                   StateHistory.compensates.is_(None), StateHistory.from_state.is_not(None),
                   StateHistory.from_state != StateHistory.to_state)
            .group_by(StateHistory.memory_id)).all())
        for r in rows:  # arrived in its queue state: it has waited since it was proposed (its createdAt)
            if r[2] in QUEUE and r[0] not in entered and r[8] is not None:
                entered[r[0]] = r[8]
        incidents = secret_incidents(session, viewer)
        band = _active_bands(session, viewer, evidence)

    by_repo: dict[str | None, list] = defaultdict(list)
    for r in rows:
        by_repo[r[1]].append(r)
    out = []
    for repo in sorted(by_repo, key=lambda x: (x is None, x or "")):
        mems = by_repo[repo]
        counts = {s: 0 for s in ALL_STATES}
        for r in mems:
            counts[r[2]] += 1
        state_of = {r[0]: r[2] for r in mems}
        stale = [r[0] for r in mems if r[2] in LIVE and r[0] in reval and reval[r[0]] != "valid"]
        conflicted = [r[0] for r in mems if r[3] == "open"]
        high_value = [mid for mid in state_of if band.get(mid) == "high"]
        high_use = sorted(((mid, uses[mid]) for mid in state_of if uses.get(mid, 0) >= HIGH_USE_MIN),
                          key=lambda u: (-u[1], u[0]))
        harmful = [(mid, harm[mid][0], _aware(harm[mid][1]), state_of[mid]) for mid in state_of
                   if mid in harm and state_of[mid] not in RETIRED_STATES]
        violations = []
        for r in mems:
            mid, state = r[0], r[2]
            if mid in secrets and state not in ("blocked", "archived"):
                violations.append((mid, f"holds a secret finding but is {state}, not blocked (invariant 5)"))
            if state == "active":
                for check in (check_evidence, check_scope):
                    try:
                        check(facts[mid])
                    except InvariantViolation as exc:
                        detail = str(exc).split(" invariant: ", 1)[-1]
                        violations.append((mid, f"is active but breaks the {exc.invariant} invariant: {detail}"))
            e = approvals.get(mid)
            if e is not None and not (e.actor_type == "human" and e.actor_role == "lead"):
                who = f"{e.actor_type}:{e.actor_id}" + (f" ({e.actor_role})" if e.actor_role else "")
                violations.append((mid, f"is high impact but was made {e.to_state} by {who}, not a lead "
                                        "(review invariant)"))
        waits = sorted((((now - _aware(entered[mid])).days, mid) for mid, st in state_of.items()
                        if st in QUEUE and mid in entered), key=lambda w: (-w[0], w[1]))
        backlog = Backlog(len([m for m, st in state_of.items() if st in QUEUE]),
                          waits[0][0] if waits else None, waits[0][1] if waits else None,
                          float(median(w[0] for w in waits)) if waits else None)
        validated = {r[0]: r[7] for r in mems}
        actions = _actions(counts, stale, conflicted, high_use, harmful, violations, backlog, state_of, validated)
        out.append(RepositoryHealthModel(repo, counts, tuple(stale), tuple(conflicted), tuple(high_value),
                                         tuple(high_use), tuple(harmful), tuple(violations), backlog, tuple(actions)))
    return HealthModel(now, tuple(out), tuple(incidents))


def repository_dict(r: RepositoryHealthModel) -> dict:
    """One ``memoryHealth`` row (seed 000 §19.3 keys first, then the §19.2 sections)."""
    s = r.by_state
    b = r.backlog
    return {
        "repositoryId": r.repository_id, "total": r.total, "active": s["active"],
        "candidatesPending": s["candidate"], "needsReview": s["needs_review"], "challenged": s["challenged"],
        "stale": len(r.stale), "conflicted": len(r.conflicted), "expired": s["expired"],
        "invalidated": s["invalidated"], "highValue": len(r.high_value),
        "reviewQueue": sum(s[q] for q in QUEUE), "byState": dict(s),
        "reviewBacklog": {"waiting": b.waiting, "oldestDays": b.oldest_days, "oldestMemoryId": b.oldest_memory_id,
                          "medianDays": b.median_days},
        "highUse": [{"memoryId": m, "uses": n} for m, n in r.high_use],
        "harmful": [{"memoryId": m, "harmEvents": n, "lastHarmAt": iso(last), "state": st}
                    for m, n, last, st in r.harmful],
        "policyViolations": [{"memoryId": m, "violation": v} for m, v in r.violations],
        "actionRequired": list(r.actions),
    }


def health_dict(model: HealthModel) -> dict:
    """``{"generatedAt", "memoryHealth": [...], "secretIncidents": [...]}``: ``memtui health --json``,
    the HTTP API and ``memory-health-report.yaml`` all print exactly this."""
    return {"generatedAt": iso(model.generated_at), "memoryHealth": [repository_dict(r) for r in model.repositories],
            "secretIncidents": list(model.secret_incidents)}
