"""Usage and harm events (seed 000 §16): what came of using a memory; harm challenges it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session

from memtui.clock import new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.domain.states import is_allowed
from memtui.governance.visibility import can_see
from memtui.review.lifecycle import MemoryNotFound, transition
from memtui.store.models import HarmEvent, Memory, UsageEvent

OUTCOMES = ("positive", "negative", "neutral", "harm")


@dataclass(frozen=True)
class UsageOutcome:
    """The usage event written, and the state change a harm event caused (or None)."""

    usage_id: str
    memory_id: str
    outcome: str
    new_state: str | None


def record_usage(engine: Engine, memory_id: str, outcome: str, actor: Actor, *, workflow_run_id: str | None = None,
                 usage_type: str = "context_pack", issue: str | None = None,
                 viewer: Actor | None = None) -> UsageOutcome:
    """Record one use of ``memory_id`` with ``outcome`` (positive, negative, neutral, harm), in one transaction.

    Sets ``last_used_at``. A ``harm`` outcome also writes a harm event with ``issue`` and moves a
    live memory to ``challenged`` (seed 000 §16.3, §21.2). ``viewer``: refuse (MemoryOutOfScope) a
    memory that actor may not see (:mod:`memtui.governance.visibility`). Raises MemoryNotFound, ValueError.
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    now = utcnow()
    with Session(engine) as session, session.begin():
        m = session.get(Memory, memory_id)
        if m is None:
            raise MemoryNotFound(memory_id)
        if viewer is not None and not can_see(session, viewer, m):
            from memtui.review.service import MemoryOutOfScope

            raise MemoryOutOfScope(memory_id, viewer)
        usage_id = new_event_id("use")
        session.add(UsageEvent(usage_id=usage_id, memory_id=memory_id, workflow_run_id=workflow_run_id,
                               usage_type=usage_type, outcome=outcome,
                               detail={"issue": issue} if issue else {}, created_at=now))
        new_state = None
        if outcome == "harm":
            session.add(HarmEvent(harm_id=new_event_id("harm"), memory_id=memory_id,
                                  issue=issue or "harm reported", action="challenged", created_at=now))
            if is_allowed(m.state, "challenged"):
                transition(session, m, "challenged", actor, reason=f"harm reported: {issue or 'no detail'}")
                new_state = "challenged"
        m.last_used_at = now
        session.add(m)
        return UsageOutcome(usage_id, memory_id, outcome, new_state)
