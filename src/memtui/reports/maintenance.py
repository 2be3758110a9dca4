"""The five maintenance reports of the seed exercise (seed 000 §26.2), as YAML with the design's camelCase keys.

Deterministic: the same store and the same ``now`` give byte-identical files (lists sorted by
memory id, no wall-clock time, no job ids).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Callable

import yaml
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.clock import iso
from memtui.domain.pruning import PruningRules
from memtui.domain.states import QUEUE_STATES
from memtui.maintenance.prune import load_pruning_policy, pruning_plan
from memtui.review.lifecycle import waiting_reasons
from memtui.store.models import Memory, Revalidation
from memtui.text import visible_data

REPORT_FILES = ("memory-health-report.yaml", "memory-revalidation-report.yaml", "memory-conflicts.yaml",
                "memory-pruning-plan.yaml", "memory-review-queue.yaml", "memory-duplicates.yaml",
                "memory-compaction-proposals.yaml")
STALE_CODES = ("changed", "deleted", "unverifiable")


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper, data):
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _str_presenter)


def _dump(path: Path, data: dict[str, Any]) -> None:
    text = yaml.dump(visible_data(data), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)
    path.write_text(text, encoding="utf-8")


def _revalidations(session: Session) -> dict[str, Revalidation]:
    return {r.memory_id: r for r in session.exec(select(Revalidation).order_by(Revalidation.memory_id))}


def health_report(engine: Engine, now: datetime) -> dict[str, Any]:
    """``memoryHealth`` per repository and the secret incidents: the one health model
    (:mod:`memtui.review.health`, seed 000 §19), exactly as ``memtui health --json`` gives it."""
    from memtui.review.health import build_health, health_dict

    return health_dict(build_health(engine, None, now))


def revalidation_report(engine: Engine, now: datetime) -> dict[str, Any]:
    """``revalidations``: the latest result per memory (seed 000 §8.3)."""
    with Session(engine) as session:
        rows = _revalidations(session)
    return {"generatedAt": iso(now), "revalidations": [
        {"memoryId": r.memory_id, "status": r.status, "severity": r.severity, "reasons": list(r.reasons),
         "reasonCodes": list(r.reason_codes), "currentEvidence": list(r.current_evidence),
         "recommendedAction": r.recommended_action,
         **({"proposedStatement": r.proposed_statement} if r.proposed_statement else {})}
        for r in rows.values()]}


def conflicts_report(engine: Engine, now: datetime) -> dict[str, Any]:
    """``memoryConflicts``: conflict records (seed 000 §10.3), open ones first."""
    from memtui.maintenance.conflicts import conflict_records

    return {"generatedAt": iso(now), "memoryConflicts": conflict_records(engine)}


def duplicates_report(engine: Engine, now: datetime) -> dict[str, Any]:
    """``duplicateClusters``: proposed near-duplicate clusters with the canonical and the scores."""
    from memtui.maintenance.dedupe import cluster_records

    return {"generatedAt": iso(now), "duplicateClusters": cluster_records(engine)}


def compaction_report(engine: Engine, now: datetime) -> dict[str, Any]:
    """``compactionProposals``: proposed statements with their members and merged evidence."""
    from memtui.maintenance.compaction import compaction_records

    return {"generatedAt": iso(now), "compactionProposals": compaction_records(engine)}


def pruning_report(engine: Engine, now: datetime, rules: PruningRules) -> dict[str, Any]:
    """``pruningPlan``: what the policy would archive and what it keeps despite a matching rule."""
    plan = pruning_plan(engine, rules, now)
    return {"generatedAt": iso(now), "pruningPlan": {
        "archive": [{"memoryId": i.memory_id, "reasons": list(i.reasons)} for i in plan.archive],
        "keep": [{"memoryId": i.memory_id, "reasons": list(i.reasons)} for i in plan.keep],
    }}


def review_queue_report(engine: Engine, now: datetime) -> dict[str, Any]:
    """``reviewQueue``: every memory waiting for a decision, with reasons and a priority (high/medium/low)."""
    with Session(engine) as session:
        rows = list(session.exec(select(Memory.memory_id, Memory.state, Memory.conflict_state, Memory.impact)
                                 .where(Memory.state.in_([s.value for s in QUEUE_STATES]))
                                 .order_by(Memory.memory_id)))
        reval = _revalidations(session)
        last = waiting_reasons(session, [r[0] for r in rows])
    items = []
    for mid, state, conflict, impact in rows:
        r = reval.get(mid)
        reasons = list(r.reasons) if r and r.status != "valid" else []
        if not reasons:
            why = last.get(mid, "pending review")
            if why.startswith("imported from "):
                why = f"imported as {state} ({why.removeprefix('imported from ')})"
            reasons = [why]
        if conflict == "open":
            reasons.append("in an open conflict")
        if (r and r.severity == "high") or conflict == "open" or state == "challenged":
            priority = "high"
        elif state == "needs_review" or impact == "high":
            priority = "medium"
        else:
            priority = "low"
        items.append({"memoryId": mid, "state": state, "reasons": reasons, "priority": priority})
    order = {"high": 0, "medium": 1, "low": 2}
    items.sort(key=lambda i: (order[i["priority"]], i["memoryId"]))
    return {"generatedAt": iso(now), "reviewQueue": items}


def report_names() -> tuple[str, ...]:
    """The reports by name, without ``.yaml`` (``memory-health-report`` ...), in file order."""
    return tuple(n.removesuffix(".yaml") for n in REPORT_FILES)


def build_report(engine: Engine, name: str, now: datetime, rules: PruningRules | None = None) -> dict[str, Any]:
    """The data of one report (``memory-health-report``, with or without ``.yaml``) as written to its
    file. Raises KeyError naming the known reports for an unknown name."""
    builders: dict[str, Callable[[], dict[str, Any]]] = {
        "memory-health-report.yaml": lambda: health_report(engine, now),
        "memory-revalidation-report.yaml": lambda: revalidation_report(engine, now),
        "memory-conflicts.yaml": lambda: conflicts_report(engine, now),
        "memory-pruning-plan.yaml": lambda: pruning_report(engine, now, rules or load_pruning_policy(None)),
        "memory-review-queue.yaml": lambda: review_queue_report(engine, now),
        "memory-duplicates.yaml": lambda: duplicates_report(engine, now),
        "memory-compaction-proposals.yaml": lambda: compaction_report(engine, now),
    }
    file = name if name.endswith(".yaml") else name + ".yaml"
    if file not in builders:
        raise KeyError(f"no report {name!r}; the reports are {', '.join(report_names())}")
    return builders[file]()


def write_reports(engine: Engine, out_dir: Path | str, now: datetime, *, pruning_policy: Path | None = None,
                  progress: Callable[[str], None] | None = None) -> list[Path]:
    """Write the report files (the five of seed 000 §26.2, plus duplicates and compaction proposals)
    into ``out_dir`` (created if missing); returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rules = load_pruning_policy(pruning_policy)
    paths = []
    for name in REPORT_FILES:
        if progress:
            progress(name)
        path = out / name
        _dump(path, build_report(engine, name, now, rules))
        paths.append(path)
    return paths
