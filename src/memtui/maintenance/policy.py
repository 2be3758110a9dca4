"""Policy-based expiry (seed 000 §14.3): a policy change sends every affected memory to review.

A policy file::

    policy:
      name: no-unreviewed-ai-memory
      description: Unreviewed AI-generated memory is no longer allowed
      sendToReviewIf:
        - {origin: agent, reviewState: [none, pending]}

A memory matches a rule when every field matches (a list means any of its values). Live
memories (active, approved, challenged) that match go to ``needs_review`` with the policy named.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy.engine import Engine
from sqlmodel import select

from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.review.lifecycle import transition
from memtui.store.models import Memory

FIELDS = {"origin": "origin", "reviewState": "review_state", "type": "type", "state": "state",
          "proposerType": "proposer_type", "failureClass": "failure_class", "repositoryId": "repository_id",
          "impact": "impact"}
AFFECTED_STATES = ("active", "approved", "challenged")


class PolicyFileError(ValueError):
    """The policy file is malformed; the message names the file and the field."""


@dataclass(frozen=True)
class ReviewPolicy:
    """A named policy with its match rules (each a dict of snake_case field -> allowed values)."""

    name: str
    description: str
    rules: tuple[dict[str, tuple[Any, ...]], ...]

    def matches(self, m: Memory) -> bool:
        """Whether memory ``m`` falls under any rule."""
        return any(all(getattr(m, f) in vals for f, vals in rule.items()) for rule in self.rules)


def load_review_policy(path: Path | str) -> ReviewPolicy:
    """Read and validate a policy file. Raises PolicyFileError naming the file and field."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise PolicyFileError(f"{path}: cannot read policy: {exc}") from exc
    body = data.get("policy") if isinstance(data, dict) else None
    if not isinstance(body, dict):
        raise PolicyFileError(f"{path}: expected a mapping with key 'policy'")
    name = body.get("name")
    if not isinstance(name, str) or not name:
        raise PolicyFileError(f"{path}: field 'policy.name': required text")
    rules = []
    for i, rule in enumerate(body.get("sendToReviewIf") or []):
        if not isinstance(rule, dict) or not rule:
            raise PolicyFileError(f"{path}: field 'policy.sendToReviewIf[{i}]': expected a mapping of field: value")
        out = {}
        for key, val in rule.items():
            if key not in FIELDS:
                raise PolicyFileError(f"{path}: field 'policy.sendToReviewIf[{i}].{key}': unknown; "
                                      f"use one of {', '.join(FIELDS)}")
            out[FIELDS[key]] = tuple(val) if isinstance(val, list) else (val,)
        rules.append(out)
    if not rules:
        raise PolicyFileError(f"{path}: field 'policy.sendToReviewIf': at least one rule is needed")
    return ReviewPolicy(name, str(body.get("description") or name), tuple(rules))


def apply_review_policy(engine: Engine, policy: ReviewPolicy, *, now: datetime | None = None,
                        dry_run: bool = False, requested_by: str | None = None, viewer=None) -> JobResult:
    """Send every live memory the policy matches to review, in one transaction (idempotent).

    The changes are made by ``system:maintenance`` with the job id (issue 3); ``requested_by``
    (the person who applied the policy) is named in each event's reason. ``viewer``: only memory
    that actor may see is matched, listed or changed (issue 21 item 8)."""
    from memtui.governance.visibility import restrict

    with job_transaction(engine, "policy", dry_run=dry_run, clock=now) as (session, result):
        query = restrict(select(Memory).where(Memory.state.in_(AFFECTED_STATES)), session, viewer)
        for m in session.exec(query.order_by(Memory.memory_id)):
            result.selected += 1
            if not policy.matches(m):
                continue
            result.updated += 1
            result.changes.append({"memoryId": m.memory_id, "from": m.state, "to": "needs_review"})
            if not dry_run:
                transition(session, m, "needs_review", MAINTENANCE_ACTOR,
                           reason=f"policy {policy.name}: {policy.description}"
                           + (f" (applied by {requested_by})" if requested_by else ""), job_id=result.job_id)
        result.summary = {"policy": policy.name, "sentToReview": result.updated, "requestedBy": requested_by}
    return result
