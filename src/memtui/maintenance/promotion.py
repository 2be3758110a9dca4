"""The promotion gate (second design document; DESIGN.md invariant 8): replay evidence and when a
candidate may be promoted without a human.

* ``memtui replay record CANDIDATE --probe NAME --passed|--failed`` adds ``replay`` evidence.
* A passed replay promotes the candidate automatically (actor ``system:promotion-gate``) only if
  the gate allows: never an environment blocker; an imported (promotion-gate) candidate only
  when the same failure recurred (``RECURRENCE`` candidates of the repository with the same
  ``failure_type``) with a repo-convention cause (``failure_class: agent_failure``); any other
  candidate when its evidence and scope invariants hold. Otherwise a human approves.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from memtui.clock import utcnow
from memtui.domain.invariants import Actor, LifecycleError
from memtui.review.lifecycle import MemoryNotFound, load_evidence, record_note, transition
from memtui.store.models import Evidence, Memory

PROMOTION_GATE = Actor(type="system", id="promotion-gate", role="reviewer")
#: How often the same failure must recur before an imported candidate becomes a compact rule.
RECURRENCE = 3


@dataclass(frozen=True)
class ReplayOutcome:
    """The replay recorded, and whether (and why not) the candidate was promoted."""

    memory_id: str
    probe: str
    passed: bool
    promoted: bool
    reason: str


def gate_reason(session: Session, m: Memory, recurrence: int = RECURRENCE) -> str | None:
    """Why ``m`` may NOT be promoted automatically (None: the gate allows it)."""
    if m.state != "candidate":
        return f"{m.memory_id} is {m.state}, not a candidate"
    if m.failure_class == "environment_blocker":
        return "an environment blocker is never promoted automatically; a human decides"
    if not any(e.type == "replay" and e.status == "valid" for e in load_evidence(session, m.memory_id)):
        return "no passed replay evidence"
    if m.origin in ("imported", "awtl"):
        if m.failure_class != "agent_failure":
            return f"failure class {m.failure_class or 'unknown'} is not a confirmed repo-convention cause"
        same = session.exec(select(func.count()).select_from(Memory).where(
            Memory.repository_id == m.repository_id, Memory.failure_type == m.failure_type,
            Memory.failure_type.is_not(None))).one()
        if same < recurrence:
            return f"the failure {m.failure_type or '(no type)'} occurred {same} time(s); {recurrence} are needed"
    return None


def record_replay(engine: Engine, memory_id: str, probe: str, passed: bool, actor: Actor, *,
                  recurrence: int = RECURRENCE) -> ReplayOutcome:
    """Add a replay result as evidence of ``memory_id`` and promote it if the gate allows; one transaction.

    Raises MemoryNotFound, ValueError (empty probe name)."""
    if not probe.strip():
        raise ValueError("--probe needs a name")
    with Session(engine) as session, session.begin():
        m = session.get(Memory, memory_id)
        if m is None:
            raise MemoryNotFound(memory_id)
        ordinal = len(load_evidence(session, memory_id))
        session.add(Evidence(memory_id=memory_id, ordinal=ordinal, type="replay", ref=f"probe:{probe}",
                             status="valid" if passed else "changed",
                             status_reason=f"replay {probe} {'passed' if passed else 'failed'} at "
                                           f"{utcnow():%Y-%m-%dT%H:%M:%SZ}"))
        session.flush()
        record_note(session, m, actor, f"replay probe {probe} {'passed' if passed else 'failed'}")
        if not passed:
            return ReplayOutcome(memory_id, probe, False, False, "the replay failed")
        why_not = gate_reason(session, m, recurrence)
        if why_not is None:
            try:
                with session.begin_nested():
                    transition(session, m, "active", PROMOTION_GATE,
                               reason=f"promotion gate: replay {probe} passed", review_state="approved")
            except LifecycleError as exc:
                why_not = str(exc)
        if why_not is not None:
            return ReplayOutcome(memory_id, probe, True, False, why_not)
        return ReplayOutcome(memory_id, probe, True, True, "promoted by the gate")
