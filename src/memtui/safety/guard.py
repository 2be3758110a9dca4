"""Where secret scanning meets the store (issue 9, item 1; design §22.4, invariant 5 "safety").

* :func:`screen_memory` — before a memory is created (import): redact secrets (and, unless kept,
  personal data) in its statement, root-cause summary, tags and evidence excerpts, in place; a
  secret makes the memory arrive ``blocked``, whatever state it came with.
* :func:`record_secret_findings` — after it is written: one :class:`SecretFinding` per secret
  (type and sha256, never the secret) and an audit event ``secret_blocked``.
* :func:`block_for_secret` — a statement edit (or a rescan) found a secret: the caller stores the
  redacted text; this blocks the memory with its findings and audit event.
* :func:`refuse_secret_comment` — a decision comment holding a secret is refused
  (:class:`SecretInComment`, a LifecycleError: exit 1, nothing written).
* :func:`redact_for_display` — text from before the scanner knew a pattern (history reasons and
  comments, evidence excerpts, file content) redacted where it is shown or exported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import Session

from memtui.clock import new_event_id, utcnow
from memtui.domain.invariants import Actor, LifecycleError
from memtui.governance.audit import audit
from memtui.safety.personal import redact_personal
from memtui.safety.secrets import SCANNER_VERSION, SecretHit, find_secrets, redact_secrets
from memtui.store.models import Evidence, Memory, SecretFinding

__all__ = ["Screening", "SecretInComment", "screen_memory", "screen_evidence", "record_secret_findings", "block_for_secret",
           "refuse_secret_comment", "redact_for_display", "secret_types", "blocked_note", "screened_import"]


#: What is shown and exported instead of the text of a blocked memory the scanner did not redact
#: (blocked by hand, or imported as blocked): its text may hold what the scanner cannot see.
WITHHELD = "[redacted: blocked memory]"


class SecretInComment(LifecycleError):
    """A comment (or other text written to the history) holds a secret; refused, naming its type only."""

    def __init__(self, types: list[str], what: str = "comment"):
        self.types = types
        super().__init__(f"the {what} holds a secret ({', '.join(types)}); it was not recorded — "
                         "write the comment without it")


@dataclass
class Screening:
    """What :func:`screen_memory` found in one memory: ``secrets`` as (field, hit) and ``personal``
    as (field, kind) pairs. ``blocked`` when any secret was found."""

    secrets: list[tuple[str, SecretHit]] = field(default_factory=list)
    personal: list[tuple[str, str]] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return bool(self.secrets)

    @property
    def types(self) -> list[str]:
        return secret_types(h for _, h in self.secrets)


def secret_types(hits) -> list[str]:
    """The distinct secret types of ``hits``, in first-seen order."""
    return list(dict.fromkeys(h.type for h in hits))


def _clean(text: str | None, fieldname: str, screening: Screening, personal: bool) -> str | None:
    if not text:
        return text
    text, hits = redact_secrets(text)
    screening.secrets += [(fieldname, h) for h in hits]
    if personal:
        text, kinds = redact_personal(text)
        screening.personal += [(fieldname, k) for k in kinds]
    return text


def screen_memory(memory: Memory, evidence: list[Evidence], *, personal: bool = True) -> Screening:
    """Redact ``memory`` and its ``evidence`` rows in place (statement, root-cause summary, tags,
    evidence excerpts); ``personal`` also redacts home paths, e-mails and phone numbers. A secret
    sets ``memory.state`` to ``blocked`` (the review flag to ``none``). Returns what was found."""
    s = Screening()
    memory.statement = _clean(memory.statement, "statement", s, personal) or memory.statement
    memory.root_cause_summary = _clean(memory.root_cause_summary, "rootCauseSummary", s, personal)
    if memory.tags:
        memory.tags = [_clean(t, "tags", s, personal) for t in memory.tags]
    screen_evidence(evidence, personal=personal, into=s)
    if s.blocked:
        memory.state = "blocked"
        memory.review_state = "none"
    return s


def screen_evidence(evidence: list[Evidence], *, personal: bool = True, into: Screening | None = None) -> Screening:
    """Redact the excerpts of ``evidence`` rows in place; what was found (added to ``into`` if given)."""
    s = into if into is not None else Screening()
    for i, e in enumerate(evidence):
        e.excerpt = _clean(e.excerpt, f"evidence[{i}].excerpt", s, personal)
    return s


def record_secret_findings(session: Session, memory_id: str, found: list[tuple[str, SecretHit]], actor: Actor,
                           *, job_id: str | None = None, how: str = "import") -> None:
    """Add a :class:`SecretFinding` per hit and one ``secret_blocked`` audit event (types, hashes,
    fields; never the secret) to the caller's session."""
    if not found:
        return
    now = utcnow()
    for fieldname, hit in found:
        session.add(SecretFinding(finding_id=new_event_id("sec"), memory_id=memory_id, field=fieldname,
                                  secret_type=hit.type, secret_hash=hit.secret_hash,
                                  scanner_version=SCANNER_VERSION, job_id=job_id, found_at=now))
    audit(session, "secret_blocked", actor.id, memory_id, how=how, scannerVersion=SCANNER_VERSION,
          findings=[{"field": f, "type": h.type, "sha256": h.secret_hash} for f, h in found])


def block_for_secret(session: Session, memory: Memory, found: list[tuple[str, SecretHit]], actor: Actor, *,
                     how: str, job_id: str | None = None) -> None:
    """Block ``memory`` (unless it is already) because of ``found``, with its findings and audit event."""
    from memtui.review.lifecycle import transition

    types = secret_types(h for _, h in found)
    if memory.state != "blocked":
        transition(session, memory, "blocked", actor, reason=f"secret found ({', '.join(types)}); text redacted",
                   job_id=job_id, review_state="none")
    record_secret_findings(session, memory.memory_id, found, actor, job_id=job_id, how=how)


def blocked_note(screen: Screening) -> str:
    """The words a creation event's reason gets when the memory arrives blocked ('' otherwise)."""
    return f"; blocked: secret found ({', '.join(screen.types)}), text redacted" if screen.blocked else ""


def screened_import(session: Session, memory_id: str, screen: Screening, actor: Actor, report) -> None:
    """After an imported memory is written: its findings and audit when blocked, and the import
    report's ``blocked`` and ``redacted`` lists (:class:`memtui.importers.native.ImportReport`)."""
    if screen.blocked:
        record_secret_findings(session, memory_id, screen.secrets, actor, how="import")
        report.blocked.append((memory_id, screen.types))
    report.redacted += [(memory_id, f, kind) for f, kind in screen.personal]


def refuse_secret_comment(comment: str | None, what: str = "comment") -> None:
    """Raise :class:`SecretInComment` when ``comment`` holds a secret."""
    if comment:
        hits = find_secrets(comment)
        if hits:
            raise SecretInComment(secret_types(hits), what)


def shown_text(session: Session, memory: Memory) -> tuple[str, str | None]:
    """The statement and root-cause summary of ``memory`` as they may be shown: secrets redacted
    (also ones stored before the scanner knew them); a blocked memory without secret findings
    (blocked by hand, or imported blocked) shows :data:`WITHHELD` (invariant 5: never shown unredacted)."""
    from sqlmodel import select

    statement, root = redact_for_display(memory.statement), redact_for_display(memory.root_cause_summary)
    if memory.state == "blocked" and session.exec(
            select(SecretFinding.finding_id).where(SecretFinding.memory_id == memory.memory_id)).first() is None:
        return WITHHELD, (WITHHELD if root else root)
    return statement, root


def redact_for_display(text: str | None) -> str | None:
    """``text`` with any secret replaced by ``<redacted: TYPE>`` (None stays None)."""
    if not text:
        return text
    return redact_secrets(text)[0]
