"""Approval re-anchors evidence at the commit the reviewer was shown (issue 8, item 7).

When a human approves a memory, its git evidence is checked once more against HEAD of the
registered checkout (the same :func:`memtui.revalidation.engine.revalidate` maintenance
runs), and each piece becomes anchored at that HEAD:

* a span, symbol or call edge still there (valid or changed): commit = HEAD, path and lines =
  where it is at HEAD, span hash recomputed — later runs diff from what the reviewer saw;
* a named reference that moved: path = its new path, commit = HEAD;
* evidence gone at HEAD (deleted): status ``retired`` — the reviewer approved knowing it is
  gone, so maintenance no longer checks it (it still shows in the history and the record);
* unresolvable references, examples and evidence without a commit are left as they are.

The original anchors are written into the approval's history (the returned sentence), so
nothing is lost. A repository without a registered, readable checkout is left untouched.
"""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session

from memtui.domain.spans import span_hash, split_lines
from memtui.revalidation.engine import EvidenceRef, revalidate
from memtui.sources.gitdiff import GitError, GitRepo
from memtui.store.models import Evidence, Memory, Repository

__all__ = ["reanchor"]

RETIRED = "retired"


def _where(e: Evidence) -> str:
    lines = ""
    if e.line_start is not None:
        lines = f":{e.line_start}" + (f"-{e.line_end}" if e.line_end not in (None, e.line_start) else "")
    what = e.symbol or e.path or e.ref or e.type
    return f"{what}{lines}@{(e.commit_sha or '')[:7]}"


def reanchor(session: Session, memory: Memory, evidence: list[Evidence]) -> str | None:
    """Re-anchor ``evidence`` (rows of ``memory``, in this session) at HEAD of the memory's
    registered checkout; the caller commits. Returns one sentence for the history ("evidence
    re-anchored at HEAD abc1234; was: ...") or None when nothing was re-anchored."""
    if not memory.repository_id:
        return None
    repo_row = session.get(Repository, memory.repository_id)
    if repo_row is None or not repo_row.checkout_path or not Path(repo_row.checkout_path).is_dir():
        return None
    rows = [e for e in evidence if e.commit_sha and (e.path is not None or e.symbol)]
    rows = [e for e in rows if e.status != RETIRED and e.status != "unresolvable" and (e.ref or "") != "example"]
    if not rows:
        return None
    repo = GitRepo(repo_row.checkout_path)
    try:
        result = revalidate([EvidenceRef(e.evidence_id, e.memory_id, e.type, e.path, e.commit_sha, e.line_start,
                                         e.line_end, e.symbol, e.target, e.span_hash, e.ref) for e in rows],
                            None, repo)
    except GitError:
        return None
    head = result.head
    checks = {c.evidence_id: c for c in result.checks}
    by_id = {e.evidence_id: e for e in rows}
    blobs_wanted = {(head, c.current_path) for c in checks.values()
                    if c.current_path and c.current_line_start is not None}
    blobs = repo.read_blobs(blobs_wanted) if blobs_wanted else {}
    was: list[str] = []
    for eid, c in checks.items():
        e = by_id[eid]
        before = _where(e)
        if c.status in ("valid", "changed") and c.current_path:
            if e.commit_sha == head and e.path == c.current_path and c.status == "valid":
                continue
            e.path = c.current_path
            e.commit_sha = head
            if c.current_line_start is not None and (e.line_start is not None or e.type == "symbol"):
                e.line_start, e.line_end = c.current_line_start, c.current_line_end
                blob = blobs.get((head, c.current_path))
                if blob is not None and e.span_hash:
                    lines = split_lines(blob.text)[c.current_line_start - 1:c.current_line_end]
                    e.span_hash = span_hash(lines)
            e.status, e.reason_code = "valid", "reanchored"
            e.status_reason = f"re-anchored at {head[:7]} on approval"
        elif c.status == "deleted":
            e.status, e.reason_code = RETIRED, "retired_on_approval"
            e.status_reason = f"gone at {head[:7]}; approved knowing it is gone"
        else:
            continue
        e.current_path, e.current_line_start, e.current_line_end, e.current_commit = (
            e.path if e.status == "valid" else None, e.line_start if e.status == "valid" else None,
            e.line_end if e.status == "valid" else None, head)
        session.add(e)
        was.append(f"{before} -> {_where(e) if e.status == 'valid' else RETIRED}")
    if not was:
        return None
    return f"evidence re-anchored at HEAD {head[:7]}; was: " + "; ".join(was)
