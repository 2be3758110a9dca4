"""The secret rescan job (issue 9, item 1; design "Maintenance jobs": secrets — rescan all when the
scanner changes).

Runs when the scanner version stored in the store (``StoreSetting`` ``secret_scanner_version``)
differs from :data:`memtui.safety.secrets.SCANNER_VERSION`, and stores the new version after: so
a second run with the same scanner looks at nothing and changes nothing. It scans every memory's
statement, root-cause summary, tags, evidence excerpts and history reasons and comments. A hit in
memory text is redacted in place (a history note records the change, without the secret), the
memory is blocked (:func:`memtui.review.lifecycle.transition`), and a ``SecretFinding`` and a
``secret_blocked`` audit event are written. History text cannot be rewritten (append-only, hash
chained): a secret there blocks the memory and is redacted wherever history is shown or exported.
"""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, select

from memtui.maintenance.jobs import MAINTENANCE_ACTOR, JobResult, job_transaction
from memtui.review.lifecycle import record_note
from memtui.safety.guard import block_for_secret, secret_types
from memtui.safety.secrets import SCANNER_VERSION, redact_secrets
from memtui.store.models import Evidence, Memory, SecretFinding, StateHistory, StoreSetting

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
            found, changed = [], []

            def scan(text, fieldname):
                if not text:
                    return text
                red, hits = redact_secrets(text)
                found.extend((fieldname, h) for h in hits)
                if hits:
                    changed.append(fieldname)
                return red

            statement = scan(m.statement, "statement")
            root = scan(m.root_cause_summary, "rootCauseSummary")
            tags = [scan(t, "tags") for t in (m.tags or [])]
            excerpts = [(e, scan(e.excerpt, f"evidence[{i}].excerpt")) for i, e in enumerate(evidence.get(m.memory_id, []))]
            for h in history.get(m.memory_id, []):
                for text, fieldname in ((h.reason, f"history[{h.event_id}].reason"),
                                        (h.comment, f"history[{h.event_id}].comment")):
                    if text:
                        found.extend((fieldname, hit) for hit in redact_secrets(text)[1])
            new = [(f, h) for f, h in found if (m.memory_id, f, h.secret_hash) not in known]
            if not new and (m.state == "blocked" or not found):
                continue
            types = secret_types(h for _, h in (new or found))
            result.updated += 1
            result.changes.append({"memoryId": m.memory_id, "from": m.state, "to": "blocked",
                                   "fields": sorted({f for f, _ in found}), "types": types})
            if dry_run:
                continue
            if changed:
                m.statement, m.root_cause_summary = statement, root
                if m.tags:
                    m.tags = tags
                for e, excerpt in excerpts:
                    if e.excerpt != excerpt:
                        e.excerpt = excerpt
                        session.add(e)
                session.add(m)
                record_note(session, m, MAINTENANCE_ACTOR,
                            f"secret rescan: {', '.join(types)} redacted in {', '.join(sorted(set(changed)))}",
                            job_id=result.job_id)
            block_for_secret(session, m, new or found, MAINTENANCE_ACTOR, how="rescan", job_id=result.job_id)
        if not dry_run:
            row = session.get(StoreSetting, SETTING_KEY) or StoreSetting(key=SETTING_KEY, value="")
            row.value = SCANNER_VERSION
            session.add(row)
        result.summary["blocked"] = result.updated
    return result
