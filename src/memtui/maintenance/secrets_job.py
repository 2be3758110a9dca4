"""The secret rescan job (issue 9, item 1; design "Maintenance jobs": secrets — rescan all when the
scanner changes).

Runs when the scanner version stored in the store (``StoreSetting`` ``secret_scanner_version``)
differs from :data:`memtui.safety.secrets.SCANNER_VERSION`, and stores the new version after: so
a second run with the same scanner looks at nothing and changes nothing. It scans every memory's
strings (:func:`memtui.safety.guard.rescreen_stored`: statement, root-cause summary, tags, scope
lists, invalidation policy, proposer, evidence paths, refs and excerpts; ids and scope keys are
found, not rewritten) and history reasons and comments, and usage and harm events (issue 21 item 4:
a secret in a harm issue, usage detail or workflow run id is redacted, a recall task's text becomes
its sha256). A hit in memory text is redacted in place (a history note records the change, without the secret), the
memory is blocked (:func:`memtui.review.lifecycle.transition`), and a ``SecretFinding`` and a
``secret_blocked`` audit event are written. History text cannot be rewritten (append-only, hash
chained): a secret there blocks the memory and is redacted wherever history is shown or exported.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, select

from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.review.lifecycle import record_note
from memtui.review.lifecycle import block_for_secret
from memtui.safety.guard import redact_for_display, rescreen_stored, secret_types
from memtui.safety.secrets import SCANNER_VERSION, redact_secrets
from memtui.store.models import Evidence, HarmEvent, Memory, SecretFinding, StateHistory, StoreSetting, UsageEvent
from memtui.store.rows import RowView

SETTING_KEY = "secret_scanner_version"


def stored_scanner_version(session: Session) -> str | None:
    """The scanner version the last rescan ran with, or None (never ran)."""
    row = session.get(StoreSetting, SETTING_KEY)
    return row.value if row else None


def run_secret_rescan(engine, now: datetime, *, dry_run: bool = False, force: bool = False) -> JobResult:
    """Rescan every memory when the scanner changed (or ``force``); one transaction. ``changes``
    lists each memory blocked or redacted with the fields and secret types (never the secret)."""
    with job_transaction(engine, "secrets", dry_run=dry_run, clock=now) as (session, result):
        before = stored_scanner_version(session)
        result.summary = {"scannerVersion": SCANNER_VERSION, "previousVersion": before}
        if before == SCANNER_VERSION and not force:
            result.summary["skipped"] = "scanner unchanged since the last rescan"
            return result
        known = {(f.memory_id, f.field, f.secret_hash) for f in session.exec(select(SecretFinding))}
        history: dict[str, list[StateHistory]] = {}
        for h in session.exec(select(StateHistory).order_by(StateHistory.event_id)):
            history.setdefault(h.memory_id, []).append(h)
        evidence: dict[str, list[Evidence]] = {}
        for e in session.exec(select(Evidence).order_by(Evidence.memory_id, Evidence.ordinal)):
            evidence.setdefault(e.memory_id, []).append(e)
        for m in session.exec(select(Memory).order_by(Memory.memory_id)).all():
            result.selected += 1
            rows = evidence.get(m.memory_id, [])
            if dry_run:  # scan copies: a dry run changes nothing, not even in the session
                found, changed = rescreen_stored(RowView(m.model_dump()),
                                                 [RowView(e.model_dump()) for e in rows])
            else:
                with session.no_autoflush:
                    found, changed = rescreen_stored(m, rows)
            for h in history.get(m.memory_id, []):
                for text, fieldname in ((h.reason, f"history[{h.event_id}].reason"),
                                        (h.comment, f"history[{h.event_id}].comment")):
                    if text:
                        found.extend((fieldname, hit) for hit in redact_secrets(text)[1])
            new = [(f, h) for f, h in found if (m.memory_id, f, h.secret_hash) not in known]
            if not new and not changed and (m.state == "blocked" or not found):
                continue
            types = secret_types(h for _, h in (new or found))
            result.updated += 1
            result.changes.append({"memoryId": redact_for_display(m.memory_id), "from": m.state, "to": "blocked",
                                   "fields": sorted({f for f, _ in found}), "types": types})
            if dry_run:
                continue
            if changed:
                for e in rows:
                    session.add(e)
                session.add(m)
                record_note(session, m, MAINTENANCE_ACTOR,
                            f"secret rescan: {', '.join(types)} redacted in {', '.join(sorted(set(changed)))}",
                            job_id=result.job_id)
            block_for_secret(session, m, new or found, MAINTENANCE_ACTOR, how="rescan", job_id=result.job_id)
        _rescan_reports(session, result, dry_run)
        if not dry_run:
            row = session.get(StoreSetting, SETTING_KEY) or StoreSetting(key=SETTING_KEY, value="")
            row.value = SCANNER_VERSION
            session.add(row)
        result.summary["blocked"] = result.updated
    return result


def _rescan_reports(session: Session, result: JobResult, dry_run: bool) -> None:
    """Usage and harm events stored before they were screened (issue 21 item 4): a secret in a harm
    issue, a usage event's detail or a workflow run id is redacted in place, a recall task's text is
    replaced by its sha256. Counted in ``summary["reportsRedacted"]``."""
    import hashlib

    n = 0
    for h in session.exec(select(HarmEvent)).all():
        red = redact_for_display(h.issue)
        if red != h.issue:
            n += 1
            if not dry_run:
                h.issue = red
                session.add(h)
    for u in session.exec(select(UsageEvent)).all():
        detail = dict(u.detail or {})
        if isinstance(detail.get("task"), str):
            detail["taskSha256"] = hashlib.sha256(detail.pop("task").encode("utf-8", "surrogatepass")).hexdigest()
        detail = {k: redact_for_display(v) if isinstance(v, str) else v for k, v in detail.items()}
        run = redact_for_display(u.workflow_run_id)
        if detail != (u.detail or {}) or run != u.workflow_run_id:
            n += 1
            if not dry_run:
                u.detail, u.workflow_run_id = detail, run
                session.add(u)
    result.summary["reportsRedacted"] = n
