"""Usage and harm events (seed 000 §16): what came of using a memory; harm challenges it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session

from memtui.clock import new_event_id, utcnow
from memtui.domain.invariants import Actor
from memtui.domain.scopes import Scope, applies_within
from memtui.domain.states import is_allowed
from memtui.governance.visibility import can_see
from memtui.review.lifecycle import MemoryNotFound, transition
from memtui.safety.guard import refuse_secret_fields
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
                 within: Scope | None = None, viewer: Actor | None = None) -> UsageOutcome:
    """Record one use of ``memory_id`` with ``outcome`` (positive, negative, neutral, harm), in one transaction.

    The event's detail names the actor (``type:id``). Sets ``last_used_at``. A ``harm`` outcome also
    writes a harm event with ``issue`` and moves a live memory to ``challenged`` (seed 000 §16.3,
    §21.2). A memory ``actor`` may not see (:func:`memtui.governance.visibility.can_see`: an agent
    never sees a private repository) or that a recall inside ``within`` would not consider
    (:func:`memtui.domain.scopes.applies_within`) is reported as MemoryNotFound, so its
    existence is not revealed; with ``viewer`` (the HTTP API) such a memory raises MemoryOutOfScope
    instead, which answers 403. An agent's harm report is bounded by :mod:`memtui.maintenance.harm`
    (rate limit; a quorum before protected memory is challenged). Raises MemoryNotFound,
    MemoryOutOfScope, HarmRateLimited, ValueError (unknown outcome).
    """
    if outcome not in OUTCOMES:
        raise ValueError(f"outcome must be one of {', '.join(OUTCOMES)}, not {outcome!r}")
    # the same refusal on every path (CLI, HTTP, MCP): a secret is never stored in a report (issue 21 item 4)
    refuse_secret_fields(("issue", issue), ("workflowRunId", workflow_run_id), ("usageType", usage_type))
    now = utcnow()
    with Session(engine) as session, session.begin():
        m = session.get(Memory, memory_id)
        if m is not None and viewer is not None and not can_see(session, viewer, m):
            from memtui.review.service import MemoryOutOfScope

            raise MemoryOutOfScope(memory_id, viewer)
        if m is None or not can_see(session, actor, m) or (
                not applies_within(m.tenant_id, m.repository_id, m.module_path, within)):
            raise MemoryNotFound(memory_id)
        challenges = False
        if outcome == "harm":  # agents: rate-limited, and a quorum for protected memory (issue 21; maintenance.harm)
            from memtui.maintenance.harm import harm_challenges

            challenges = harm_challenges(session, m, actor, now)
        usage_id = new_event_id("use")
        session.add(UsageEvent(usage_id=usage_id, memory_id=memory_id, workflow_run_id=workflow_run_id,
                               usage_type=usage_type, outcome=outcome,
                               detail={"actor": f"{actor.type}:{actor.id}", **({"issue": issue} if issue else {}),
                                       **({} if challenges or outcome != "harm" else {"quorum": "pending"})},
                               created_at=now))
        new_state = None
        if challenges:
            session.add(HarmEvent(harm_id=new_event_id("harm"), memory_id=memory_id,
                                  issue=issue or "harm reported", action="challenged", created_at=now))
            if is_allowed(m.state, "challenged"):
                transition(session, m, "challenged", actor, reason=f"harm reported: {issue or 'no detail'}")
                new_state = "challenged"
        m.last_used_at = now
        session.add(m)
        return UsageOutcome(usage_id, memory_id, outcome, new_state)
