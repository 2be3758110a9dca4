"""Where secret scanning meets the store (issue 9, item 1; design §22.4, invariant 5 "safety").

* :func:`screen_memory` — before a memory is created (import): redact secrets (and, unless kept,
  personal data) in its statement, root-cause summary, tags and evidence excerpts, in place; a
  secret makes the memory arrive ``blocked``, whatever state it came with.
* :func:`record_secret_findings` — after it is written: one :class:`SecretFinding` per secret
  (type and sha256, never the secret) and an audit event ``secret_blocked``.
* :func:`memtui.review.lifecycle.block_for_secret` — a statement edit (or a rescan) found a secret:
  the caller stores the redacted text; that blocks the memory with its findings and audit event.
* :func:`refuse_secret_comment` — a decision comment holding a secret is refused
  (:class:`SecretInComment`, a LifecycleError: exit 1, nothing written).
* :func:`redact_for_display` — text from before the scanner knew a pattern (history reasons and
  comments, evidence excerpts, file content) redacted where it is shown or exported.
* :func:`refuse_secret_fields` — a string that must not be stored redacted (an id, a name, a scope
  key, a harm issue, a run id) and holds a secret is refused (:class:`SecretRefused`, naming the field).

Every stored string passes one scanner (issue 21 item 4). Per field, a secret is either

* **redacted, the memory blocked** — the text of a memory and its evidence (:data:`REDACTED_FIELDS`):
  statement, rootCauseSummary, tags, appliesTo, doesNotApplyTo, invalidationPolicy, failureType,
  verificationProbe, sourceActionIds, proposedBy.id, importSource; evidence path, ref, symbol,
  target, excerpt, commitSha, currentPath, statusReason (import, propose over MCP/HTTP, edit, rescan);
* **refused, naming the field, nothing written** — what identifies or places something
  (:data:`REFUSED_FIELDS`): memoryId, logicalMemoryId, supersededBy, tenantId, repositoryId,
  modulePath, evidence repositoryId; and outside memory: decision comments, harm and usage ``issue``,
  ``workflowRunId``, reviewer names and scopes, token labels, repository names and checkout paths.

A recall request keeps only a hash of its task (:func:`memtui.recall.recall`); the pack it answers
with carries the task redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlmodel import Session

from memtui.clock import new_event_id, utcnow
from memtui.domain.invariants import Actor, LifecycleError
from memtui.governance.audit import audit
from memtui.safety.personal import redact_personal
from memtui.safety.secrets import SCANNER_VERSION, SecretHit, find_secrets, redact_secrets, scan_cached
from memtui.store.models import Evidence, Memory, SecretFinding
from memtui.store.rows import RowView

__all__ = ["Screening", "SecretInComment", "SecretRefused", "refuse_secret_fields", "screen_memory", "screen_evidence", "rescreen_stored", "record_secret_findings",
           "refuse_secret_comment", "redact_for_display", "secret_types", "blocked_note", "screened_import"]


#: What is shown and exported instead of the text of a blocked memory the scanner did not redact
#: (blocked by hand, or imported as blocked): its text may hold what the scanner cannot see.
WITHHELD = "[redacted: blocked memory]"


class SecretInComment(LifecycleError):
    """A comment (or other text written to the history) holds a secret; refused, naming its type only."""

    def __init__(self, types: list[str], what: str = "comment"):
        self.types = types
        self.field = what
        super().__init__(f"the {what} holds a secret ({', '.join(types)}); it was not recorded — "
                         "write the comment without it")


class SecretRefused(SecretInComment):
    """A field that is never stored redacted (an id, a name, a scope key, an issue) holds a secret:
    refused, naming the field and the secret's type (never the secret); nothing was written."""

    def __init__(self, types: list[str], what: str):
        LifecycleError.__init__(self, f"{what} holds a secret ({', '.join(types)}); it is never stored — "
                                      "refused, nothing was written (issue 21: secrets in every stored string)")
        self.types, self.field = types, what


#: Memory columns whose secret is refused (they identify or place the memory), with the record's field name.
REFUSED_FIELDS: dict[str, str] = {
    "memory_id": "memoryId", "logical_memory_id": "logicalMemoryId", "superseded_by": "supersededBy",
    "tenant_id": "scope.tenantId", "repository_id": "scope.repositoryId", "module_path": "scope.modulePath",
}
#: Memory columns whose secret is redacted in place (the memory is blocked), with the record's field name.
REDACTED_FIELDS: dict[str, str] = {
    "applies_to": "appliesTo", "does_not_apply_to": "doesNotApplyTo", "invalidation_policy": "invalidationPolicy",
    "failure_type": "failureType", "verification_probe": "verificationProbe", "source_action_ids": "sourceActionIds",
    "proposer_id": "proposedBy.id", "import_source": "importSource",
}
#: Evidence columns whose secret is redacted in place (``excerpt`` also loses personal data).
EVIDENCE_REDACTED: tuple[str, ...] = ("path", "ref", "symbol", "target", "commit_sha", "current_path",
                                      "status_reason")


def refuse_secret_fields(*fields: tuple[str, str | None]) -> None:
    """Raise :class:`SecretRefused` for the first ``(field name, value)`` whose value holds a secret."""
    for name, value in fields:
        if value and isinstance(value, str):
            hits = find_secrets(value)
            if hits:
                raise SecretRefused(secret_types(hits), name)


_HEXISH = re.compile(r"[0-9a-fA-F]{4,64}")


def _redact_value(value, hits: list):
    """``value`` (a string, or lists and dicts of them) with secrets redacted (the same object when
    nothing changed); the hits found are appended to ``hits``."""
    if isinstance(value, str):
        if not value or _HEXISH.fullmatch(value):
            return value  # a commit or content hash: hex is never a secret to the scanner (secrets._entropy_hits)
        found = find_secrets(value)
        if not found:
            return value
        hits += found
        return redact_secrets(value)[0]
    if isinstance(value, list):
        out = [_redact_value(v, hits) for v in value]
        return value if all(a is b for a, b in zip(out, value)) else out
    if isinstance(value, dict):
        out = {k: _redact_value(v, hits) for k, v in value.items()}
        return value if all(out[k] is v for k, v in value.items()) else out
    return value


def _get(obj, col: str):
    """A column of an ORM row or a :class:`memtui.store.rows.RowView` (None when absent)."""
    row = obj.row if isinstance(obj, RowView) else None
    return row.get(col) if row is not None else getattr(obj, col, None)


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
    """Screen every string of ``memory`` and its ``evidence`` rows (issue 21 item 4): a secret in a
    :data:`REFUSED_FIELDS` column (or an evidence ``repository_id``) raises :class:`SecretRefused`
    naming the field, before anything changed; a secret anywhere else is redacted in place (statement,
    root-cause summary, tags, :data:`REDACTED_FIELDS`, evidence :data:`EVIDENCE_REDACTED` and excerpts)
    and sets ``memory.state`` to ``blocked`` (the review flag to ``none``); ``personal`` also redacts
    home paths, e-mails and phone numbers in the statement, summary, tags and excerpts. Returns what
    was found. A memory none of whose strings holds a secret (nearly all: :func:`_any_secret`, one
    cached scan per distinct string) only has its personal data redacted; the rest take every step
    above, so the findings are the same either way."""
    if not _any_secret(memory, evidence):
        return _screen_personal(memory, evidence, personal)
    return _screen_all(memory, evidence, personal)


def _screen_all(memory, evidence, personal: bool) -> Screening:
    """:func:`screen_memory` step by step, every string scanned and redacted where it is."""
    refuse_secret_fields(*((name, _get(memory, col)) for col, name in REFUSED_FIELDS.items()),
                         *((f"evidence[{i}].repositoryId", _get(e, "repository_id")) for i, e in enumerate(evidence)))
    s = Screening()
    memory.statement = _clean(memory.statement, "statement", s, personal) or memory.statement
    memory.root_cause_summary = _clean(memory.root_cause_summary, "rootCauseSummary", s, personal)
    if memory.tags:
        memory.tags = [_clean(t, "tags", s, personal) for t in memory.tags]
    _redact_columns(memory, REDACTED_FIELDS.items(), s)
    screen_evidence(evidence, personal=personal, into=s)
    if s.blocked:
        memory.state = "blocked"
        memory.review_state = "none"
    return s


def _strings(value, out: list[str], hexish: bool) -> None:
    """Append the strings of ``value`` (a string, or lists and dicts of them: their values) to ``out``;
    with ``hexish`` False, leave out those :func:`_redact_value` passes over (commit or content hashes)."""
    if isinstance(value, str):
        if value and (hexish or not _HEXISH.fullmatch(value)):
            out.append(value)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out, hexish)
    elif isinstance(value, dict):
        for v in value.values():
            _strings(v, out, hexish)


_MEMORY_SCANNED = ("statement", "root_cause_summary", "tags", *REFUSED_FIELDS)  # scanned whole, hex too
_EVIDENCE_SCANNED = ("excerpt", "repository_id")


def _any_secret(memory, evidence) -> bool:
    """Whether any string :func:`screen_memory` scans for secrets in ``memory`` and ``evidence`` holds
    one. Each distinct string is scanned once (:func:`memtui.safety.secrets.scan_cached`), the same scan
    the full screening does, so False means the full screening finds nothing."""
    strings: list[str] = []
    add = strings.append
    for obj, whole, redacted in ((memory, _MEMORY_SCANNED, REDACTED_FIELDS),
                                 *((e, _EVIDENCE_SCANNED, EVIDENCE_REDACTED) for e in evidence)):
        row = obj.row if isinstance(obj, RowView) else None
        for hexish, columns in ((True, whole), (False, redacted)):
            for col in columns:
                value = row.get(col) if row is not None else getattr(obj, col, None)
                if not value:
                    continue
                if value.__class__ is str:
                    if hexish or not _HEXISH.fullmatch(value):
                        add(value)
                else:
                    _strings(value, strings, hexish)
    return any(map(scan_cached, set(strings)))


def _screen_personal(memory, evidence, personal: bool) -> Screening:
    """:func:`screen_memory` of a memory without secrets: personal data redacted (unless not
    ``personal``) in the statement, root-cause summary, tags and evidence excerpts, in place and in
    the same order; nothing else changes."""
    s = Screening()
    found = s.personal

    def clean(text, name):
        if not text or not personal:
            return text
        text, kinds = redact_personal(text)
        found.extend((name, k) for k in kinds)
        return text

    memory.statement = clean(memory.statement, "statement") or memory.statement
    memory.root_cause_summary = clean(memory.root_cause_summary, "rootCauseSummary")
    if memory.tags:
        memory.tags = [clean(t, "tags") for t in memory.tags]
    for i, e in enumerate(evidence):
        e.excerpt = clean(e.excerpt, f"evidence[{i}].excerpt")
    return s


def screen_evidence(evidence: list[Evidence], *, personal: bool = True, into: Screening | None = None) -> Screening:
    """Redact the excerpts and :data:`EVIDENCE_REDACTED` strings of ``evidence`` rows in place; what was
    found (added to ``into`` if given)."""
    s = into if into is not None else Screening()
    for i, e in enumerate(evidence):
        e.excerpt = _clean(e.excerpt, f"evidence[{i}].excerpt", s, personal)
        _redact_columns(e, ((col, f"evidence[{i}].{_camel(col)}") for col in EVIDENCE_REDACTED), s)
    return s


def _redact_columns(row, columns, s: Screening) -> None:
    """Redact each ``(column, field name)`` of ``row`` that holds a secret, in place; add the hits to ``s``."""
    for col, name in columns:
        value = _get(row, col)
        if value:
            hits: list[SecretHit] = []
            red = _redact_value(value, hits)
            if hits:
                setattr(row, col, red)
                s.secrets += [(name, h) for h in hits]


def rescreen_stored(memory: Memory, evidence: list[Evidence]) -> tuple[list[tuple[str, SecretHit]], list[str]]:
    """A stored memory scanned again (the rescan job, issue 21 item 4): secrets in every redactable
    string (statement, summary, tags, :data:`REDACTED_FIELDS`, evidence excerpts and
    :data:`EVIDENCE_REDACTED`) redacted in place (no personal-data pass); secrets in
    :data:`REFUSED_FIELDS` (stored before they were refused) found but left, the memory being
    blocked and its ids redacted where shown. Returns (findings as (field, hit), fields changed)."""
    found: list[tuple[str, SecretHit]] = []
    changed: list[str] = []

    def scan(obj, col: str, name: str) -> None:
        value = _get(obj, col)
        if value:
            hits: list[SecretHit] = []
            red = _redact_value(value, hits)
            if hits:
                setattr(obj, col, red)
                found.extend((name, h) for h in hits)
                changed.append(name)

    for col, name in (("statement", "statement"), ("root_cause_summary", "rootCauseSummary"), ("tags", "tags"),
                      *REDACTED_FIELDS.items()):
        scan(memory, col, name)
    for i, e in enumerate(evidence):
        for col in ("excerpt", *EVIDENCE_REDACTED):
            scan(e, col, f"evidence[{i}].{_camel(col)}")
    for col, name in REFUSED_FIELDS.items():
        value = _get(memory, col)
        if value:
            found += [(name, h) for h in find_secrets(value)]
    return found, changed


def _camel(col: str) -> str:
    head, *rest = col.split("_")
    return head + "".join(w.title() for w in rest)


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
