"""Pruning (seed 000 §13): a plan from a YAML policy, and applying an accepted plan (archive, never delete)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.invariants import Actor, LifecycleError
from memtui.domain.pruning import DEFAULT_POLICY, PolicyError, PruneFacts, PruneItem, PruningRules, parse_policy, plan_item
from memtui.maintenance.jobs import JobResult, job_transaction
from memtui.review.lifecycle import transition
from memtui.store.models import Memory


def load_pruning_policy(path: Path | str | None) -> PruningRules:
    """The policy in YAML file ``path`` (None: the design's default). Raises PolicyError naming the file."""
    if path is None:
        return parse_policy(DEFAULT_POLICY)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PolicyError(f"{path}: {exc.strerror or exc}") from exc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise PolicyError(f"{path}: line {mark.line + 1 if mark else '?'}: YAML syntax error: {exc.problem}") from exc
    try:
        return parse_policy(data)
    except PolicyError as exc:
        raise PolicyError(f"{path}: {exc}") from exc


@dataclass
class PruningPlan:
    """``archive`` and ``keep`` lists (keep: a rule matched but the memory is protected), by memory id."""

    archive: list[PruneItem] = field(default_factory=list)
    keep: list[PruneItem] = field(default_factory=list)


def pruning_plan(engine: Engine, rules: PruningRules, now: datetime, repository_id: str | None = None,
                 viewer: Actor | None = None) -> PruningPlan:
    """Compute the plan at ``now`` (read-only; deterministic order by memory id). ``viewer``: only the
    memory that actor may see (:func:`memtui.governance.visibility.restrict`; issue 21 item 8), so a
    plan -- and the archiving it leads to -- never lists memory outside the caller's scopes."""
    from memtui.governance.visibility import restrict

    plan = PruningPlan()
    with Session(engine) as session:
        q = restrict(select(Memory), session, viewer)
        if repository_id is not None:
            q = q.where(Memory.repository_id == repository_id)
        for m in session.exec(q.order_by(Memory.memory_id)):
            item = plan_item(PruneFacts(m.memory_id, m.type, m.state, m.review_state, m.confidence, m.created_at,
                                        m.last_used_at), rules, now)
            if item is not None:
                (plan.archive if item.action == "archive" else plan.keep).append(item)
    return plan


def apply_pruning_plan(engine: Engine, plan: PruningPlan, actor: Actor, only: set[str] | None = None,
                       now: datetime | None = None) -> JobResult:
    """Archive the plan's ``archive`` items (or those in ``only``) in one transaction, each with a history
    event naming the plan's reasons. Memories whose state changed since the plan are skipped."""
    planned = {i.memory_id for i in plan.archive}
    if only is not None and only - planned:
        raise PolicyError(f"not in the plan's archive list: {', '.join(sorted(only - planned))}")
    with job_transaction(engine, "prune", clock=now) as (session, result):
        for item in plan.archive:
            if only is not None and item.memory_id not in only:
                continue
            result.selected += 1
            m = session.get(Memory, item.memory_id)
            if m is None or m.state == "archived":
                continue
            try:
                with session.begin_nested():  # one refused memory (e.g. needs a lead) does not undo the rest
                    transition(session, m, "archived", actor, reason="pruning plan: " + "; ".join(item.reasons),
                               job_id=result.job_id)
            except LifecycleError as exc:
                result.changes.append({"memoryId": m.memory_id, "refused": str(exc)})
                continue
            result.updated += 1
            result.changes.append({"memoryId": m.memory_id, "to": "archived"})
    return result


__all__ = ["PolicyError", "PruningPlan", "apply_pruning_plan", "load_pruning_policy", "pruning_plan"]
