"""Review service: reviewer decisions and undo (one transaction each), and the read queries
behind the review queue, ``memtui show``, ``memtui history`` and ``memtui health``.

Every method opens its own session; a decision and its history event commit together or
not at all (DESIGN.md, "Lifecycle").
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Sequence

from sqlalchemy.engine import Engine
from sqlalchemy.orm.exc import StaleDataError
from sqlmodel import Session, func, select

from memtui.clock import iso, utcnow
from memtui.domain.decisions import Decision, DecisionError, VersionChanged, review_state_after, target_state
from memtui.domain.invariants import Actor
from memtui.domain.states import ALL_STATES
from memtui.governance.visibility import can_see, restrict
from memtui.review.concurrency import changed_by, changed_by_now, retry_when_outraced
from memtui.review.lifecycle import MemoryNotFound, load_evidence, transition
from memtui.review.lifecycle import RETIRED_STATES, close_conflicts_of_retired, waiting_reasons
from memtui.review import queue_query
from memtui.review.queue_query import QUEUE_RANK, QueueFilter
from memtui.review.views import (
    DecisionOutcome,
    EventView,
    EvidenceView,
    MemoryDetailView,
    QueueItemView,
    RepositoryHealth,
    ScopeView,
)
from memtui.store.models import Evidence, Memory, Revalidation, StateHistory

REJECTABLE_STATES = ("candidate", "approved", "active", "needs_review", "challenged", "superseded")


class MemoryOutOfScope(MemoryNotFound):
    """The memory lies outside the viewer's scopes (issue 9): shown as such, never its content."""

    def __init__(self, memory_id: str, viewer: Actor | None):
        super().__init__(memory_id)
        scopes = ", ".join(viewer.scopes or ()) if viewer else ""
        self.args = (f"{memory_id}: outside your scopes ({scopes})",)

    def __str__(self) -> str:
        return self.args[0]


def _scope(m: Memory) -> ScopeView:
    return ScopeView(m.tenant_id, m.repository_id, m.module_path,
                     tuple(m.applies_to or ()), tuple(m.does_not_apply_to or ()))


def _item_view(m: Memory, key: tuple = ()) -> QueueItemView:
    """The queue row of ``m``; ``key`` its sort values (the keyset cursor of the next page)."""
    return QueueItemView(m.memory_id, QUEUE_RANK.get(m.state, len(QUEUE_RANK)), m.state, m.type, m.statement,
                         _scope(m), m.confidence, m.created_at, m.version,
                         key=key or (queue_query.STATE_RANK[m.state], m.memory_id),
                         impact=m.impact, conflict_state=m.conflict_state)


def _event_view(e: StateHistory) -> EventView:
    """The view of a history event; reason and comment redacted (text written before the scanner
    knew a pattern cannot be rewritten: the history is append-only; issue 9)."""
    from memtui.safety.guard import redact_for_display as r

    return EventView(e.event_id, e.memory_id, e.from_state, e.to_state, r(e.reason), r(e.comment),
                     e.actor_type, e.actor_id, e.actor_role, e.job_id, e.compensates, e.created_at)


class ReviewService:
    """Decisions and queries over one store (an SQLAlchemy engine from :func:`memtui.store.engine.open_store`).

    ``viewer``: the queries show only memory this actor may see
    (:mod:`memtui.governance.visibility`; None: everything); an out-of-scope id raises
    :class:`MemoryOutOfScope`."""

    def __init__(self, engine: Engine, viewer: Actor | None = None):
        self.engine = engine
        self.viewer = viewer

    @property
    def store_key(self) -> str:
        """The store's URL without its password: the key of per-store user settings."""
        return self.engine.url.render_as_string(hide_password=True)

    def _visible(self, session: Session, m: Memory | None, memory_id: str) -> Memory:
        if m is None:
            raise MemoryNotFound(memory_id)
        if not can_see(session, self.viewer, m):
            raise MemoryOutOfScope(memory_id, self.viewer)
        return m

    # ---- decisions -------------------------------------------------------------------------
    @retry_when_outraced
    def decide(self, memory_id: str, decision: Decision | str, actor: Actor,
               comment: str | None = None, expected_version: int | None = None) -> DecisionOutcome:
        """Apply a reviewer decision (approve, reject, needs-review, archive, block) in one transaction.

        ``expected_version`` (the version the reviewer saw) refuses the decision if someone
        changed the memory meanwhile. Who may cause the outcome is judged from where the memory's
        current review began (issue 21: an active ADR sent to review and then rejected needs a lead);
        a memory another reviewer claimed is decided only by them or a lead, who breaks the claim.
        Raises MemoryNotFound, DecisionError (ClaimHeld among them), TransitionRefused or
        InvariantViolation; the store is unchanged then.
        """
        return self.decide_many([memory_id], decision, actor, comment,
                                None if expected_version is None else {memory_id: expected_version})[0]

    @retry_when_outraced
    def decide_many(self, memory_ids: Sequence[str], decision: Decision | str, actor: Actor,
                    comment: str | None = None, expected_versions: dict[str, int] | None = None
                    ) -> list[DecisionOutcome]:
        """One decision on many memories in one transaction (the queue's range select): all are
        written or none. ``expected_versions``: memory id -> the version the reviewer saw. Raises as
        :meth:`decide` for the first memory refused (its id in the message); nothing is written then."""
        decision = Decision(decision)
        from memtui.safety.guard import refuse_secret_comment

        refuse_secret_comment(comment)  # issue 9: a secret never reaches the history
        expected_versions = expected_versions or {}
        current = None
        try:
            with Session(self.engine) as session, session.begin():
                out = []
                for current in memory_ids:
                    out.append(self._decide_in(session, current, decision, actor, comment,
                                               expected_versions.get(current)))
                return out
        except StaleDataError as exc:
            raise VersionChanged(changed_by_now(self.engine, current, expected_versions.get(current))) from exc

    def _decide_in(self, session: Session, memory_id: str, decision: Decision, actor: Actor,
                   comment: str | None, expected_version: int | None) -> DecisionOutcome:
        memory = session.get(Memory, memory_id)
        if memory is None:
            raise MemoryNotFound(memory_id)
        if expected_version is not None and memory.version != expected_version:
            raise VersionChanged(changed_by(session, memory, expected_version))
        if decision is Decision.REJECT and memory.state not in REJECTABLE_STATES:
            raise DecisionError(f"{memory_id} is {memory.state}; only a memory waiting for a decision "
                                "or in use can be rejected")
        to = target_state(decision, memory.state)
        if to.value == memory.state:
            raise DecisionError(f"{memory_id} is already {memory.state}")
        from_state = memory.state
        event = transition(session, memory, to, actor, reason=f"reviewer decision: {decision.value}",
                           comment=comment, review_state=review_state_after(decision))
        if decision is Decision.APPROVE and actor.type == "human":
            # the reviewer saw the evidence at HEAD: later runs diff from there (issue 8, item 7)
            from memtui.review.anchor import reanchor

            anchored = reanchor(session, memory, load_evidence(session, memory_id))
            if anchored:
                event.reason = f"{event.reason}; {anchored}"
            settled = settle_revalidation(session, memory_id, event.event_id, event.created_at)
            if settled:  # issue 23 item 3: show, health, recall and MCP read the reviewer's result
                event.reason = f"{event.reason}; {settled}"
        if decision is Decision.BLOCK:
            from memtui.governance.audit import audit

            audit(session, "memory_blocked", actor.id, memory_id, fromState=from_state, comment=comment)
        if to.value in RETIRED_STATES:
            session.flush()
            close_conflicts_of_retired(session, memory, actor, None)
        session.flush()  # the optimistic UPDATE ... WHERE version = N runs here
        return DecisionOutcome(event.event_id, memory_id, from_state, to.value, version=memory.version)

    def comment_on(self, event_id: str, actor: Actor, comment: str) -> str:
        """Attach ``comment`` to the decision ``event_id`` after the fact: the history is append-only,
        so a note event (no state change) carries it, naming the decision. Returns the note's id.
        Raises DecisionError (no such event, empty comment) or SecretInComment."""
        from memtui.review.lifecycle import record_note
        from memtui.safety.guard import refuse_secret_comment

        comment = (comment or "").strip()
        if not comment:
            raise DecisionError("the comment is empty")
        refuse_secret_comment(comment)
        with Session(self.engine) as session, session.begin():
            event = session.get(StateHistory, event_id)
            if event is None:
                raise DecisionError(f"no event {event_id!r} in the store")
            note = record_note(session, session.get(Memory, event.memory_id), actor, f"comment on {event_id}")
            note.comment = comment
            return note.event_id

    @retry_when_outraced
    def edit_statement(self, memory_id: str, actor: Actor, *, text: str | None = None, proposed: bool = False,
                       expected_version: int | None = None) -> str:
        """Edit a memory's statement in one transaction and record it in the history (from = to state).

        ``proposed``: take revalidation's proposed statement (named paths that moved rewritten)
        and point those references at their new paths; else ``text``. Returns the event id.
        Raises MemoryNotFound or DecisionError (nothing proposed, empty text, a changed version)."""
        from memtui.review.lifecycle import record_note
        from memtui.revalidation.references import rewrite_reference

        with Session(self.engine) as session, session.begin():
            memory = session.get(Memory, memory_id)
            if memory is None:
                raise MemoryNotFound(memory_id)
            if expected_version is not None and memory.version != expected_version:
                raise VersionChanged(changed_by(session, memory, expected_version))
            from memtui.domain.invariants import check_rewrite
            from memtui.review.lifecycle import facts_of

            check_rewrite(facts_of(memory, []), actor, "edit")  # issue 21 item 1
            moved: list[Evidence] = []
            settled_reasons: list[str] = []
            if proposed:
                reval = session.get(Revalidation, memory_id)
                if reval is None or not reval.proposed_statement:
                    raise DecisionError(f"{memory_id} has no proposed edit (nothing it names has moved)")
                text = reval.proposed_statement
                rows = load_evidence(session, memory_id)
                moved = [e for e in rows if e.reason_code == "path_moved" and e.current_path]
                settled_reasons = [e.status_reason for e in moved if e.status_reason]
                settled_codes = () if any(e.reason_code == "path_moved" and not e.current_path
                                          for e in rows) else ("path_moved",)
            text = (text or "").strip()
            if not text:
                raise DecisionError("the new statement is empty")
            from memtui.safety.secrets import redact_secrets

            text, secrets = redact_secrets(text)  # issue 9: the secret never reaches the store
            if text == memory.statement:
                raise DecisionError(f"{memory_id} already says that")
            old = memory.statement
            memory.statement = text
            session.add(memory)
            for e in moved:  # the line now names the new path: check it from HEAD on
                if e.target:
                    e.target = rewrite_reference(e.target, e.path, e.current_path)
                e.path, e.commit_sha = e.current_path, e.current_commit or e.commit_sha
                e.status, e.reason_code, e.status_reason = "valid", "exists", "rewritten by the accepted edit"
                session.add(e)
            if proposed:
                reval.proposed_statement = None
                session.add(reval)
                settled = settle_revalidation(session, memory_id, None, utcnow(), reasons=settled_reasons,
                                              codes=settled_codes)
                if settled:  # issue 23 item 3: its own note, so the edit note keeps its shape (reports)
                    note = record_note(session, memory, actor, f"accepted edit: {settled}")
                    reval.job_id = note.event_id
            why = "statement edited" + (" (revalidation's proposal: moved paths)" if proposed else "")
            event = record_note(session, memory, actor, f"{why}: {old!r} -> {text!r}")
            if secrets:
                from memtui.review.lifecycle import block_for_secret

                block_for_secret(session, memory, [("statement", h) for h in secrets], actor, how="edit")
            return event.event_id

    def undo(self, event_id: str, actor: Actor, comment: str | None = None) -> DecisionOutcome:
        """Reverse the decision recorded as ``event_id`` with a compensating event (never a deletion).

        Only the actor who made the change, or a lead, may undo it.
        A ``comment`` holding a secret is refused (issue 9).
        Refused when the memory has changed since (a later event, or its state is no longer the
        event's ``to_state``), when the event was already undone, or when it created the memory.
        """
        return self.undo_many([event_id], actor, comment)[0]

    def undo_many(self, event_ids: Sequence[str], actor: Actor, comment: str | None = None) -> list[DecisionOutcome]:
        """Undo several decisions (a batch) in one transaction, all or none, as :meth:`undo` each."""
        from memtui.safety.guard import refuse_secret_comment

        refuse_secret_comment(comment)
        with Session(self.engine) as session, session.begin():
            return [self._undo_in(session, e, actor, comment) for e in event_ids]

    def _undo_in(self, session: Session, event_id: str, actor: Actor, comment: str | None) -> DecisionOutcome:
        event = session.get(StateHistory, event_id)
        if event is None:
            raise DecisionError(f"no event {event_id!r} in the store")
        if event.from_state is None:
            raise DecisionError(f"{event_id} created {event.memory_id}; creation cannot be undone")
        if event.actor_id != actor.id and actor.role != "lead":
            raise DecisionError(f"{event_id} was decided by {event.actor_type}:{event.actor_id}; "
                                "only that reviewer or a lead can undo it")
        undone = session.exec(select(StateHistory.event_id).where(StateHistory.compensates == event_id)).first()
        if undone:
            raise DecisionError(f"{event_id} was already undone by {undone}")
        newer = session.exec(select(StateHistory.event_id).where(  # a comment on the decision is no change
            StateHistory.memory_id == event.memory_id, StateHistory.event_id > event_id,
            StateHistory.reason != f"comment on {event_id}")).first()
        if newer:
            raise DecisionError(f"{event.memory_id} has changed since {event_id} (by {newer}); "
                                "only its latest change can be undone")
        memory = session.get(Memory, event.memory_id)
        if memory.state != event.to_state:
            raise DecisionError(
                f"{memory.memory_id} is {memory.state} now, no longer {event.to_state}; "
                "the decision cannot be undone"
            )
        back = transition(session, memory, event.from_state, actor,
                          reason=f"undo of {event_id} ({event.reason})", comment=comment,
                          compensates=event_id, review_state=event.review_state_before)
        return DecisionOutcome(back.event_id, memory.memory_id, event.to_state, event.from_state,
                               compensates=event_id)

    def last_undoable_event(self, memory_id: str) -> str | None:
        """The newest human decision on ``memory_id`` that is not an undo and not yet undone, or None."""
        with Session(self.engine) as session:
            undone = select(StateHistory.compensates).where(StateHistory.compensates.is_not(None))
            return session.exec(
                select(StateHistory.event_id)
                .where(StateHistory.memory_id == memory_id, StateHistory.from_state.is_not(None),
                       StateHistory.compensates.is_(None), StateHistory.actor_type == "human",
                       StateHistory.event_id.not_in(undone))
                .order_by(StateHistory.event_id.desc())
            ).first()

    # ---- claims (issue 9: two reviewers never work the same item) ---------------------------
    def claim_next(self, actor: Actor, n: int = 1, ttl_minutes: float = 30.0) -> list[str]:
        """Claim the next ``n`` unclaimed queue items for ``actor`` (see :mod:`memtui.review.concurrency`)."""
        from memtui.review.concurrency import claim_next

        return claim_next(self.engine, actor.id, n, ttl_minutes, viewer=self.viewer or actor)

    def release(self, actor: Actor, memory_ids: list[str] | None = None) -> int:
        """Give back ``actor``'s claims (all, or those on ``memory_ids``); returns how many."""
        from memtui.review.concurrency import release

        return release(self.engine, actor.id, memory_ids)

    # ---- queries ---------------------------------------------------------------------------
    def queue_count(self) -> int:
        """How many memories wait for a decision (states in QUEUE_STATES)."""
        with Session(self.engine) as session:
            return session.exec(restrict(
                select(func.count()).select_from(Memory).where(Memory.state.in_(list(QUEUE_RANK))),
                session, self.viewer)).one()

    def queue_page(self, after: tuple[int, str] | None = None, limit: int = 100, *,
                   states: Sequence[str] | None = None, memory_type: str | None = None,
                   repository_id: str | None = None, reason_code: str | None = None) -> list[QueueItemView]:
        """The next ``limit`` queue items after the keyset cursor ``(rank, memory_id)``.

        Order: state rank (needs_review, challenged, candidate, approved), then memory id.
        Filters (the HTTP API's ``GET /review-queue``): ``states`` (queue states only; others give
        nothing), ``memory_type``, ``repository_id``, ``reason_code`` (a piece of its evidence
        carries that revalidation reason code, e.g. ``span_changed``). The TUI's richer filters
        and sorts: :meth:`find`.
        """
        if states is not None:
            states = tuple(s for s in states if s in QUEUE_RANK)
            if not states:
                return []
        f = QueueFilter(states=tuple(states or ()), memory_type=memory_type, repository_id=repository_id,
                        reason_code=reason_code)
        return self.find(f, after, limit)

    def find(self, f: QueueFilter, after: tuple | None = None, limit: int = 100) -> list[QueueItemView]:
        """The next ``limit`` memories matching ``f`` (filters, search, sort) after the keyset ``after``
        (the ``key`` of the last item of the previous page; None: from the top). See
        :mod:`memtui.review.queue_query`."""
        from memtui.clock import utcnow

        with Session(self.engine) as session:
            return [_item_view(r.memory, r.key) for r in queue_query.find(session, self.viewer, f, after, limit, utcnow())]

    def find_count(self, f: QueueFilter) -> int:
        """How many memories match ``f``."""
        from memtui.clock import utcnow

        with Session(self.engine) as session:
            return queue_query.count(session, self.viewer, f, utcnow())

    def queue_item(self, memory_id: str) -> QueueItemView:
        """The queue row of one memory as it is now (after a decision, to redraw it). Raises MemoryNotFound."""
        with Session(self.engine) as session:
            return _item_view(self._visible(session, session.get(Memory, memory_id), memory_id))

    def detail(self, memory_id: str) -> MemoryDetailView:
        """The whole record with its evidence. Raises MemoryNotFound."""
        with Session(self.engine) as session:
            m = self._visible(session, session.get(Memory, memory_id), memory_id)
            rows = load_evidence(session, memory_id)
            evidence = tuple(
                EvidenceView(e.type, e.path, e.commit_sha, e.line_start, e.line_end, e.symbol, e.target,
                             e.ref, e.span_hash, e.status, e.repository_id, e.current_path,
                             e.current_line_start, e.current_line_end, e.current_commit, e.reason_code,
                             e.status_reason)
                for e in rows
            )
            gates = ()
            if self.viewer is not None:
                from memtui.domain.invariants import approval_gates
                from memtui.review.lifecycle import facts_of

                gates = tuple(approval_gates(facts_of(m, rows), self.viewer))
            reval = session.get(Revalidation, memory_id)
            from memtui.safety.guard import shown_text

            statement, root_cause = shown_text(session, m)  # issue 9: never shown unredacted
            from memtui.review import lineage

            compaction = lineage.compaction_of(session, memory_id) if m.proposer_type == "compaction" else None
            return MemoryDetailView(
                memory_id=m.memory_id, logical_memory_id=m.logical_memory_id, type=m.type,
                statement=statement, scope=_scope(m), state=m.state, confidence=m.confidence,
                review_state=m.review_state, conflict_state=m.conflict_state, impact=m.impact,
                origin=m.origin, proposer_type=m.proposer_type, proposer_id=m.proposer_id,
                failure_class=m.failure_class, failure_type=m.failure_type,
                promotion_status=m.promotion_status, requires_human_review=m.requires_human_review,
                root_cause_summary=root_cause, tags=tuple(m.tags or ()),
                invalidation_policy=tuple(m.invalidation_policy or ()), created_at=m.created_at,
                last_validated_at=m.last_validated_at, last_used_at=m.last_used_at,
                expires_at=m.expires_at, expires_after_days=m.expires_after_days,
                review_after_days=m.review_after_days, superseded_by=m.superseded_by,
                version=m.version, evidence=evidence,
                revalidation_status=reval.status if reval else None,
                revalidation_reasons=tuple(reval.reasons) if reval else (),
                proposed_statement=reval.proposed_statement if reval else None,
                sources=tuple(lineage.sources_of(session, memory_id)),
                compaction_status=compaction.status if compaction else None, gates=gates,
                waiting_reason=waiting_reasons(session, [memory_id]).get(memory_id),
            )

    def history(self, memory_id: str) -> list[EventView]:
        """All state-history events of a memory, oldest first. Raises MemoryNotFound."""
        with Session(self.engine) as session:
            self._visible(session, session.get(Memory, memory_id), memory_id)
            rows = session.exec(
                select(StateHistory).where(StateHistory.memory_id == memory_id).order_by(StateHistory.event_id)
            )
            return [_event_view(e) for e in rows]

    def health(self) -> list[RepositoryHealth]:
        """Counts per state per repository, every state present (0 when none), repositories sorted by id."""
        counts: dict[str | None, dict[str, int]] = defaultdict(lambda: {s: 0 for s in ALL_STATES})
        with Session(self.engine) as session:
            rows = session.exec(restrict(
                select(Memory.repository_id, Memory.state, func.count()), session, self.viewer
            ).group_by(Memory.repository_id, Memory.state))
            for repo, state, n in rows:
                counts[repo][state] = n
        return [RepositoryHealth(repo, dict(by_state))
                for repo, by_state in sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))]

    def growth(self, weeks: int = 26) -> list[tuple[datetime, int]]:
        """Memories in the store at the end of each of the last ``weeks`` weeks (by ``created_at``), oldest first."""
        from memtui.clock import utcnow

        end = utcnow()
        starts = [end - timedelta(weeks=weeks - i) for i in range(1, weeks + 1)]
        with Session(self.engine) as session:
            created = sorted(session.exec(restrict(select(Memory.created_at), session, self.viewer)).all())
        out, i = [], 0
        for edge in starts:
            while i < len(created) and created[i] <= edge:
                i += 1
            out.append((edge, i))
        return out

    def memory_page(self, memory_id: str):
        """A memory's detail, full history, usage and harm, and related items
        (:func:`memtui.review.memory_page.memory_page`). Raises MemoryNotFound / MemoryOutOfScope."""
        from memtui.review.memory_page import memory_page

        return memory_page(self, memory_id)

    def health_model(self, now: datetime | None = None):
        """The one health model (:func:`memtui.review.health.build_health`) of what this service's viewer sees."""
        from memtui.review.health import build_health

        return build_health(self.engine, self.viewer, now)

    def conflict_open_count(self) -> dict[str | None, int]:
        """Memories with an open conflict, per repository."""
        with Session(self.engine) as session:
            rows = session.exec(restrict(
                select(Memory.repository_id, func.count()).where(Memory.conflict_state == "open"),
                session, self.viewer).group_by(Memory.repository_id))
            return {repo: n for repo, n in rows}


def settle_revalidation(session: Session, memory_id: str, settled_by: str | None, now: datetime, *,
                        reasons: Sequence[str] | None = None, codes: Sequence[str] = ()) -> str | None:
    """Record a reviewer's revalidation result as the memory's latest (issue 23 item 3), in the caller's
    transaction: ``show``, health, recall and MCP read that row, so they agree with the decision.

    ``reasons`` None (an approval): the whole result is settled — status ``valid``, severity ``none``,
    no reasons, nothing to do. Else (an accepted edit) only those reasons and ``codes`` leave the result;
    it becomes ``valid`` when no reason is left. ``settled_by``: the history event id that settled it
    (stored as the result's ``job_id``; None: the caller sets it). Returns the sentence naming the result
    it replaced, for the history (so the old result stays there), or None when there was nothing to
    settle (no result, already ``valid``, none of ``reasons`` in it)."""
    reval = session.get(Revalidation, memory_id)
    if reval is None or reval.status == "valid":
        return None
    old_reasons, old_codes = list(reval.reasons or ()), list(reval.reason_codes or ())
    left = [] if reasons is None else [r for r in old_reasons if r not in set(reasons)]
    if reasons is not None and len(left) == len(old_reasons):
        return None
    was = (f"revalidation {reval.status} of {iso(reval.checked_at)} settled"
           + (f" ({', '.join(old_codes)})" if old_codes else "")
           + (": " + "; ".join(r for r in old_reasons if r not in left) if old_reasons else ""))
    if left:
        reval.reasons = left
        reval.reason_codes = [c for c in old_codes if c not in set(codes)]
    else:
        reval.status, reval.severity, reval.recommended_action = "valid", "none", "none"
        reval.reasons, reval.reason_codes = [], []
        was += "; now valid"
    if settled_by is not None:
        reval.job_id = settled_by
    reval.checked_at = now
    session.add(reval)
    return was


def health_json(engine: Engine, viewer: Actor | None, repository_id: str | None = None) -> dict:
    """``memtui health --json`` (and the HTTP API's health endpoint): :func:`memtui.review.health.health_dict`
    of the memory ``viewer`` may see, now; ``repository_id`` narrows ``memoryHealth`` and
    ``secretIncidents`` to one repository."""
    from memtui.review.health import build_health, health_dict

    report = health_dict(build_health(engine, viewer))
    if repository_id is not None:
        report["memoryHealth"] = [r for r in report["memoryHealth"] if r["repositoryId"] == repository_id]
        report["secretIncidents"] = [i for i in report["secretIncidents"] if i["repositoryId"] == repository_id]
    return report
