"""The services one reviewer's TUI session uses, over one store (issue 11, item 10).

The app holds one :class:`Workstation`; screens reach every service through it
(``self.app.services``) and never see the engine (DESIGN.md, "Layers"). Services are built on
first use, so opening the app imports only the review service.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cached_property
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from memtui.domain.invariants import Actor
from memtui.governance.visibility import restrict
from memtui.review.service import ReviewService
from memtui.store.models import Memory


class Workstation:
    """Review, proposals, resolutions, evidence, maintenance and reports for ``actor`` over ``engine``.

    Reads show only what ``actor`` may see (issue 9); decisions are recorded as ``actor``.
    """

    def __init__(self, engine: Engine, actor: Actor) -> None:
        self._engine = engine
        self.actor = actor
        self.review = ReviewService(engine, actor)

    @property
    def read_only(self) -> str | None:
        """Why the store was opened read-only (decisions are refused), or None (issue 21 item 7)."""
        from memtui.store.engine import read_only_reason

        return read_only_reason(self._engine)

    def change_counter(self) -> int:
        """The store's change counter (:func:`memtui.store.changes.current`; 0: the store has none):
        the queue polls it to notice changes by another reviewer or process (issue 24)."""
        from memtui.store import changes

        return changes.current(self._engine)

    @property
    def store_label(self) -> str:
        """Which store this is, for a header: a SQLite file's path (relative to the current folder when
        under it, ``~/…`` under the home folder), else the URL without its password."""
        return store_label(self._engine)

    @cached_property
    def proposals(self):
        """Duplicate clusters, conflicts and compaction proposals (:class:`memtui.review.proposals.ProposalQueries`)."""
        from memtui.review.proposals import ProposalQueries

        return ProposalQueries(self._engine, self.actor)

    @cached_property
    def resolve(self):
        """Merges, conflict resolutions, compaction decisions and their undo (:class:`memtui.review.resolve.ResolveService`)."""
        from memtui.review.resolve import ResolveService

        return ResolveService(self._engine)

    def compare_evidence(self, memory_id: str, index: int):
        """The ``index``-th evidence of ``memory_id``, recorded vs HEAD (:func:`memtui.review.evidence.compare_evidence`)."""
        from memtui.review.evidence import compare_evidence

        return compare_evidence(self._engine, memory_id, index)

    def evidence_file(self, memory_id: str, index: int):
        """Where to open the ``index``-th evidence of ``memory_id`` in an editor
        (:func:`memtui.review.handoff.evidence_file`)."""
        from memtui.review.handoff import evidence_file

        return evidence_file(self._engine, memory_id, index)

    def evidence_commit(self, memory_id: str, index: int):
        """The checkout and commit of that evidence, for ``git show`` (:func:`memtui.review.handoff.evidence_commit`)."""
        from memtui.review.handoff import evidence_commit

        return evidence_commit(self._engine, memory_id, index)

    def maintain(self, *, now: datetime, progress: Callable[[str], None] | None = None,
                 on_progress: Callable[[int, int], None] | None = None,
                 cancelled: Callable[[], bool] | None = None) -> list:
        """Every maintenance job over every registered repository (:func:`memtui.maintenance.runner.maintain`;
        ``cancelled()`` asked before each job)."""
        from memtui.maintenance.runner import maintain

        return maintain(self._engine, now=now, progress=progress, on_progress=on_progress, cancelled=cancelled)

    def write_decision_report(self, path: Path | str, fmt: str = "md") -> int:
        """Write the decision report to ``path`` (:func:`memtui.reports.decisions.write_decision_report`);
        returns how many decisions it holds. Raises OSError."""
        from memtui.reports.decisions import write_decision_report

        return write_decision_report(self._engine, path, fmt)

    def memory_ids(self, part: str, limit: int = 20) -> list[str]:
        """Up to ``limit`` ids of memories ``actor`` may see that hold ``part`` (``junit`` finds
        ``mem_junit5_tests``): those starting with it first, then the rest, each in id order (for
        "jump to memory" in the command palette)."""
        from sqlalchemy import case

        with Session(self._engine) as session:
            q = restrict(select(Memory.memory_id).where(Memory.memory_id.contains(part, autoescape=True)),
                         session, self.actor)
            starts = case((Memory.memory_id.startswith(part, autoescape=True), 0), else_=1)
            return list(session.exec(q.order_by(starts, Memory.memory_id).limit(limit)))

    def find_memories(self, part: str, limit: int = 10) -> list[tuple[str, str]]:
        """Up to ``limit`` (id, statement) of memories ``actor`` may see whose id or statement holds ``part``
        (:func:`memtui.review.statements.find_memories`: the palette and the jump dialog)."""
        from memtui.review.statements import find_memories

        return find_memories(self._engine, self.actor, part, limit)


def store_label(engine: Engine) -> str:
    """See :attr:`Workstation.store_label`."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        path = Path(url.database).resolve()
        for base, prefix in ((Path.cwd(), ""), (Path.home(), "~/")):
            try:
                return prefix + str(path.relative_to(base))
            except ValueError:
                continue
        return str(path)
    return url.render_as_string(hide_password=True)
