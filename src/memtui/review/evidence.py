"""Evidence side by side: a span at its recorded commit beside the same span at HEAD.

GitHub's review comments are the model (STYLE.md): an anchor keeps its original commit and
lines; when the code under it changed it is shown as *outdated* next to the current code,
never silently re-anchored.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlmodel import Session

from memtui.review.lifecycle import MemoryNotFound, load_evidence
from memtui.store.models import Memory, Repository

CONTEXT = 0  # lines of context shown around a span (the span itself is what the memory cites)
MAX_SPAN_LINES = 400


@dataclass(frozen=True)
class SpanLine:
    """One line of a span: its 1-based number in the file and its text (no newline)."""

    number: int
    text: str


@dataclass(frozen=True)
class DiffRow:
    """One aligned row of the side-by-side view; ``tag`` is equal, replace, delete or insert."""

    left: SpanLine | None
    right: SpanLine | None
    tag: str


@dataclass(frozen=True)
class EvidenceComparison:
    """A span at its recorded commit (left) and at HEAD (right), aligned row by row.

    ``outdated``: the text changed (or is gone) since it was recorded. ``hunks``: row indexes
    where a run of changed rows starts (for ``n``/``N``). ``note``: why a side is missing.
    """

    memory_id: str
    index: int
    count: int
    type: str
    status: str
    recorded_label: str
    current_label: str | None
    rows: tuple[DiffRow, ...]
    outdated: bool
    hunks: tuple[int, ...]
    note: str | None = None


def _span(text: str | None, start: int | None, end: int | None) -> list[SpanLine]:
    if text is None or start is None:
        return []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    end = min(end or start, len(lines), start + MAX_SPAN_LINES - 1)
    from memtui.safety.guard import redact_for_display  # file content shown is redacted (issue 9)

    return [SpanLine(n, redact_for_display(lines[n - 1])) for n in range(max(1, start - CONTEXT), end + 1)]


def align(old: list[SpanLine], new: list[SpanLine]) -> tuple[tuple[DiffRow, ...], tuple[int, ...]]:
    """Align two spans with difflib; returns the rows and the index of the first row of each change run."""
    rows: list[DiffRow] = []
    hunks: list[int] = []
    matcher = difflib.SequenceMatcher(None, [l.text for l in old], [l.text for l in new], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            hunks.append(len(rows))
        if tag == "equal":
            rows.extend(DiffRow(old[i], new[j], "equal") for i, j in zip(range(i1, i2), range(j1, j2)))
            continue
        left, right = old[i1:i2], new[j1:j2]
        for k in range(max(len(left), len(right))):
            rows.append(DiffRow(left[k] if k < len(left) else None, right[k] if k < len(right) else None,
                                "replace" if k < len(left) and k < len(right) else ("delete" if k < len(left) else "insert")))
    return tuple(rows), tuple(hunks)


def evidence_and_repository(engine: Engine, memory_id: str) -> tuple[list, Repository | None]:
    """``memory_id``'s evidence (:func:`memtui.review.lifecycle.load_evidence`) and its repository
    (None for an org-wide memory). Raises MemoryNotFound."""
    with Session(engine) as session:
        memory = session.get(Memory, memory_id)
        if memory is None:
            raise MemoryNotFound(memory_id)
        evidence = load_evidence(session, memory_id)
        repo = session.get(Repository, memory.repository_id) if memory.repository_id else None
    return evidence, repo


def compare_evidence(engine: Engine, memory_id: str, index: int) -> EvidenceComparison:
    """The ``index``-th evidence of ``memory_id`` side by side (recorded commit vs HEAD).

    Reads the two blobs with one ``git cat-file --batch`` in the repository's registered
    checkout. Evidence without a file (human, ref) or a repository without a checkout yields
    a comparison with a ``note`` and no rows. Raises MemoryNotFound, IndexError.
    """
    from memtui.sources.gitdiff import GitError, GitRepo

    evidence, repo = evidence_and_repository(engine, memory_id)
    if not evidence:
        raise IndexError(f"{memory_id} has no evidence")
    e = evidence[index % len(evidence)]
    idx = index % len(evidence)
    rec = f"{e.path or e.ref or e.symbol or '-'}"
    if e.line_start is not None:
        rec += f":{e.line_start}" + (f"-{e.line_end}" if e.line_end and e.line_end != e.line_start else "")
    if e.commit_sha:
        rec += f" @ {e.commit_sha[:7]}"
    base = dict(memory_id=memory_id, index=idx, count=len(evidence), type=e.type, status=e.status,
                recorded_label=rec)
    if not e.path or not e.commit_sha:
        return EvidenceComparison(**base, current_label=None, rows=(), outdated=False, hunks=(),
                                  note=f"{e.type} evidence has no file span to show"
                                  + (f": {e.ref}" if e.ref else ""))
    if repo is None or not repo.checkout_path:
        return EvidenceComparison(**base, current_label=None, rows=(), outdated=False, hunks=(),
                                  note="the repository has no registered checkout (memtui repo add NAME PATH)")
    try:
        git = GitRepo(repo.checkout_path)
        head = git.head()
        cur_path = e.current_path or e.path
        blobs = git.read_blobs([(e.commit_sha, e.path), (head, cur_path)])
    except GitError as exc:
        return EvidenceComparison(**base, current_label=None, rows=(), outdated=False, hunks=(), note=str(exc))
    old_blob, new_blob = blobs.get((e.commit_sha, e.path)), blobs.get((head, cur_path))
    old = _span(old_blob.text if old_blob else None, e.line_start, e.line_end)
    if e.current_line_start is not None:
        new = _span(new_blob.text if new_blob else None, e.current_line_start, e.current_line_end)
    elif e.status == "unchecked":
        new = _span(new_blob.text if new_blob else None, e.line_start, e.line_end)
    else:
        new = []
    cur = None
    if new:
        cur = f"{cur_path}:{new[0].number}" + (f"-{new[-1].number}" if len(new) > 1 else "") + f" @ {head[:7]}"
    note = None
    if old_blob is None:
        note = f"commit {e.commit_sha[:7]} or {e.path} is unknown to the checkout (force-push or shallow clone?)"
    elif not new:
        note = e.status_reason or f"{cur_path} is gone at HEAD {head[:7]}"
    elif e.status == "unchecked":
        note = "not revalidated yet: the right side shows the same line numbers at HEAD (run maintenance)"
    rows, hunks = align(old, new)
    outdated = e.status in ("changed", "deleted", "unverifiable") or bool(hunks)
    return EvidenceComparison(**base, current_label=cur, rows=rows, outdated=outdated, hunks=hunks, note=note)
