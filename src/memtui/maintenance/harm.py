"""What an agent's harm report may do (issue 21 item 8; seed 000 §16.3 "harm challenges").

A harm report by a human challenges the memory at once, as before. An agent's report is bounded:

- **Rate**: an agent (a token's name on HTTP; the agent's name on MCP) may file at most
  :data:`HARM_REPORTS_PER_HOUR` harm reports in any hour, over all memory; the next one is refused
  (:class:`HarmRateLimited`: HTTP 429 with ``Retry-After``, an MCP tool error) and nothing is written.
- **Quorum on protected memory**: a *protected* memory -- high-impact (an architecture decision,
  impact ``high``, org-wide; :func:`memtui.domain.invariants.is_high_impact`) or *lead-owned* (on a
  store with reviewers, taken into use by a lead: its latest move to ``approved``/``active`` was a
  human acting as lead) -- is challenged by agents only once :data:`AGENT_QUORUM` distinct agents
  have reported harm since it entered its current state, or any human has. A report below that is
  recorded (a usage event with outcome ``harm`` and ``"quorum": "pending"``) but writes no harm event
  and changes neither the state nor the quality score. Other memory is challenged by one agent's report.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from sqlmodel import Session, func, select

from memtui.domain.invariants import Actor, is_high_impact
from memtui.store.models import Evidence, Memory, StateHistory, UsageEvent

#: Harm reports one agent may file in any hour (all memory together).
HARM_REPORTS_PER_HOUR = 20
RATE_WINDOW = timedelta(hours=1)
#: Distinct agents whose harm reports together challenge a protected memory (one human suffices).
AGENT_QUORUM = 2


class HarmRateLimited(Exception):
    """An agent filed :data:`HARM_REPORTS_PER_HOUR` harm reports within the last hour; ``retry_after``
    is the number of seconds until the oldest of them leaves the window."""

    def __init__(self, agent: str, retry_after: int):
        self.agent, self.retry_after = agent, retry_after
        super().__init__(f"harm reports: agent {agent!r} filed {HARM_REPORTS_PER_HOUR} in the last hour, the most "
                         f"an agent may (issue 21); try again in {retry_after} s")


def _reporter(actor: Actor) -> str:
    return f"{actor.type}:{actor.id}"


def _harm_reports(session: Session, since: datetime, memory_id: str | None = None) -> list[tuple[datetime, str]]:
    """(time, ``type:id`` of the reporter) of the harm usage events since ``since`` (one memory or all)."""
    q = select(UsageEvent.created_at, UsageEvent.detail).where(UsageEvent.outcome == "harm",
                                                              UsageEvent.created_at >= since)
    if memory_id is not None:
        q = q.where(UsageEvent.memory_id == memory_id)
    return [(at, str((detail or {}).get("actor", ""))) for at, detail in session.exec(q)]


def check_harm_rate(session: Session, actor: Actor, now: datetime) -> None:
    """Refuse (:class:`HarmRateLimited`) an agent's harm report over the hourly limit; humans unbounded."""
    if actor.type != "agent":
        return
    mine = sorted(at for at, who in _harm_reports(session, now - RATE_WINDOW) if who == _reporter(actor))
    if len(mine) >= HARM_REPORTS_PER_HOUR:
        oldest = mine[-HARM_REPORTS_PER_HOUR]
        if oldest.tzinfo is None and now.tzinfo is not None:
            oldest = oldest.replace(tzinfo=now.tzinfo)
        raise HarmRateLimited(actor.id, max(1, math.ceil((oldest + RATE_WINDOW - now).total_seconds())))


def is_protected(session: Session, m: Memory) -> bool:
    """High-impact, or lead-owned on a store with reviewers (see the module docstring)."""
    from memtui.governance.reviewers import is_governed
    from memtui.review.lifecycle import facts_of

    evidence = list(session.exec(select(Evidence).where(Evidence.memory_id == m.memory_id)))
    if is_high_impact(facts_of(m, evidence)):
        return True
    if not is_governed(session):
        return False
    taken = session.exec(select(StateHistory).where(
        StateHistory.memory_id == m.memory_id, StateHistory.to_state.in_(("approved", "active")))
        .order_by(StateHistory.created_at.desc(), StateHistory.event_id.desc())).first()
    return taken is not None and taken.actor_type == "human" and taken.actor_role == "lead"


def harm_challenges(session: Session, m: Memory, actor: Actor, now: datetime) -> bool:
    """Whether this harm report by ``actor`` challenges ``m`` (True for a human; see the module
    docstring for agents). Raises :class:`HarmRateLimited` first, before anything is written."""
    check_harm_rate(session, actor, now)
    if actor.type != "agent" or not is_protected(session, m):
        return True
    since = session.exec(select(func.max(StateHistory.created_at)).where(
        StateHistory.memory_id == m.memory_id)).one()
    reporters = {who for _at, who in _harm_reports(session, since or datetime.min, m.memory_id)}
    if any(who.startswith("human:") for who in reporters):
        return True
    agents = {who for who in reporters if who.startswith("agent:")} | {_reporter(actor)}
    return len(agents) >= AGENT_QUORUM


__all__ = ["AGENT_QUORUM", "HARM_REPORTS_PER_HOUR", "HarmRateLimited", "check_harm_rate", "harm_challenges",
           "is_protected"]
