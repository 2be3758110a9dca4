"""An imported record's evidence, checked against the repository (issue 21, item 3).

Import obeys the evidence invariant (DESIGN.md invariant 1) as a decision does: a record arriving
``approved`` or ``active`` keeps that state only when at least one piece of its evidence *resolves*:

* evidence with a path at a commit: the checkout holds the commit and the file is present at it;
* ``doc`` / ``adr`` evidence without a commit (its ``path``, or a ``ref`` written as a repository
  path): the file exists at HEAD of the checkout;
* ``human`` evidence: the human source of invariant 1, as a decision accepts it (nothing in a
  checkout can confirm or refute it).

Anything else (no checkout to check against, a made-up commit or file, a path without a commit,
replay or free references) does not count; the record then arrives as a ``candidate`` and the
reason is listed in the import summary (``ImportReport.demoted``) and in its creation event.

The status a file gives its evidence is never kept: every piece arrives ``unchecked`` (it exists
where it says; whether it still matches HEAD is revalidation's business), or ``unverifiable`` with
the reason when the check found it missing. The checkout of a record is ``--repo`` when the import
has one, else the registered checkout of the record's repository (``memtui repo add``); every git
call goes through :class:`memtui.sources.gitdiff.GitRepo` (one ``cat-file --batch-check`` to resolve
a batch's commits, one per distinct commit for its files, one for HEAD).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlmodel import Session

from memtui.domain.states import LIVE_STATES

__all__ = ["EvidenceCheck", "ImportEvidence"]

_LIVE = frozenset(s.value for s in LIVE_STATES)

@dataclass(frozen=True)
class EvidenceCheck:
    """What the import found for one piece of evidence: its status, a reason code and sentence when
    it is missing, and whether it resolves (counts for the evidence invariant)."""

    status: str = "unchecked"
    reason_code: str | None = None
    reason: str | None = None
    resolves: bool = False


#: the two outcomes that need no reason, shared (every piece of evidence of a large import has one)
_UNCHECKED = EvidenceCheck()
_RESOLVES = EvidenceCheck(resolves=True)


def _short(sha: str | None) -> str:
    return (sha or "")[:7]


def _doc_path(ev: dict) -> str | None:
    """The repository path a doc/ADR reference names (:func:`memtui.revalidation.engine.doc_reference_path`)."""
    from memtui.revalidation.engine import doc_reference_path

    return doc_reference_path(ev.get("type"), ev.get("path"), ev.get("ref"))


class ImportEvidence:
    """Checks the evidence of imported records (see the module doc). ``repo_root``: the import's
    ``--repo`` checkout (used for every record), or None to use each repository's registered checkout."""

    def __init__(self, session: Session, repo_root: Path | str | None = None):
        self.session = session
        self.repo_root = Path(repo_root) if repo_root is not None else None
        self._repos: dict[str | None, Any] = {}
        self._heads: dict[int, str | None] = {}

    # -- checkouts ------------------------------------------------------------------------------

    def _repo(self, repository_id: str | None):
        """The GitRepo to check ``repository_id``'s evidence against, or None (no usable checkout)."""
        key = None if self.repo_root is not None else repository_id
        if key in self._repos:
            return self._repos[key]
        from memtui.sources.gitdiff import GitError, GitRepo
        from memtui.store.models import Repository

        path: Path | None = self.repo_root
        if path is None and repository_id is not None:
            row = self.session.get(Repository, repository_id)
            path = Path(row.checkout_path) if row is not None and row.checkout_path else None
        repo = None
        if path is not None and path.is_dir():
            repo = GitRepo(path)
            try:
                self._heads[id(repo)] = repo.head()
            except GitError:
                repo = None
        self._repos[key] = repo
        return repo

    def _where(self, repository_id: str | None) -> str:
        if self.repo_root is not None:
            return f"the checkout {self.repo_root}"
        return f"repository {repository_id!r}" if repository_id else "an org-wide record"

    # -- checks ---------------------------------------------------------------------------------

    def check(self, records: list[tuple[dict, list[dict]]]) -> dict[str, str]:
        """Check the evidence of ``records`` (memory column dict, its evidence column dicts) in place:
        each evidence dict's ``status``, ``reason_code`` and ``status_reason`` are set to what the
        check found. A record arriving live with no evidence that resolves is demoted in place
        (``state`` candidate, ``review_state`` pending). Returns memory id -> why, for the demoted."""
        from memtui.sources.gitdiff import GitError

        found: dict[int, EvidenceCheck] = {}
        by_repo: dict[int, tuple[Any, list[tuple[dict, dict]]]] = {}
        for memory, evidence in records:
            for ev in evidence:
                repo = self._repo(ev.get("repository_id") or memory.get("repository_id"))
                if repo is None:
                    found[id(ev)] = _RESOLVES if ev.get("type") == "human" else _UNCHECKED
                    continue
                by_repo.setdefault(id(repo), (repo, []))[1].append((memory, ev))
        for repo, pairs in by_repo.values():
            try:
                found.update(self._check_repo(repo, [ev for _, ev in pairs]))
            except GitError as exc:  # the checkout broke under us: nothing of it resolves
                for _, ev in pairs:
                    found[id(ev)] = EvidenceCheck("unverifiable", "checkout_unreadable", str(exc))
        demoted: dict[str, str] = {}
        live = _LIVE
        for memory, evidence in records:
            for ev in evidence:
                got = found.get(id(ev), _UNCHECKED)
                ev["status"], ev["reason_code"], ev["status_reason"] = got.status, got.reason_code, got.reason
            if memory.get("state") in live and not any(
                    found.get(id(ev), _UNCHECKED).resolves for ev in evidence):
                why = self._why(memory, evidence, found)
                memory["state"], memory["review_state"] = "candidate", "pending"
                demoted[memory["memory_id"]] = why
        return demoted

    def _why(self, memory: dict, evidence: list[dict], found: dict[int, EvidenceCheck]) -> str:
        state = memory.get("state")
        head = (f"arrived {state} but no evidence resolves against the repository (evidence invariant, "
                "issue 21: a commit the checkout holds with the file present, a doc or ADR that exists, "
                "or a human source)")
        if not evidence:
            return f"{head}: it has no evidence; kept as a candidate"
        notes = []
        for i, ev in enumerate(evidence):
            got = found.get(id(ev), _UNCHECKED)
            if got.reason:
                notes.append(f"evidence[{i}]: {got.reason}")
            elif self._repo(ev.get("repository_id") or memory.get("repository_id")) is None:
                notes.append(f"evidence[{i}] ({ev.get('type')}): no checkout of "
                             f"{self._where(ev.get('repository_id') or memory.get('repository_id'))} to check it "
                             "against (import with --repo, or register it: memtui repo add)")
            else:
                notes.append(f"evidence[{i}] ({ev.get('type')}): names no file at a commit, and no doc or ADR "
                             "in the checkout")
        return f"{head}: " + "; ".join(notes) + "; kept as a candidate"

    def _check_repo(self, repo, evs: list[dict]) -> dict[int, EvidenceCheck]:
        """Check ``evs`` against one checkout: commits resolved in one process, files per commit."""
        from memtui.sources.history import safe_repo_path

        out: dict[int, EvidenceCheck] = {}
        at_commit: dict[str, list[tuple[dict, str]]] = {}
        at_head: list[tuple[dict, str]] = []
        for ev in evs:
            commit, typ = ev.get("commit_sha"), ev.get("type")
            if typ == "human":
                out[id(ev)] = _RESOLVES
            elif ev.get("path") and commit:
                path = safe_repo_path(ev["path"])
                if path is None:
                    out[id(ev)] = EvidenceCheck("unverifiable", "bad_path",
                                                f"path {ev['path']!r} cannot name a file inside the repository")
                else:
                    at_commit.setdefault(commit, []).append((ev, path))
            elif not commit and (path := _doc_path(ev)) is not None:
                at_head.append((ev, path))
            else:
                out[id(ev)] = _UNCHECKED
        resolved = repo.resolve_commits(at_commit) if at_commit else {}
        for commit, pairs in sorted(at_commit.items()):
            sha = resolved.get(commit)
            if sha is None:
                for ev, path in pairs:
                    out[id(ev)] = EvidenceCheck("unverifiable", "commit_unknown",
                                                f"commit {_short(commit)} of {path} is not in the checkout")
                continue
            sizes = repo.blob_sizes(sha, sorted({p for _, p in pairs}))
            for ev, path in pairs:
                if sizes.get(path) is None:
                    out[id(ev)] = EvidenceCheck("unverifiable", "path_unknown",
                                                f"{path} does not exist at commit {_short(commit)}")
                else:
                    out[id(ev)] = _RESOLVES
        if at_head:
            head = self._heads.get(id(repo)) or repo.head()
            sizes = repo.blob_sizes(head, sorted({p for _, p in at_head}))
            for ev, path in at_head:
                if sizes.get(path) is None:
                    out[id(ev)] = EvidenceCheck("unverifiable", "doc_missing",
                                                f"{ev.get('type')} {path} does not exist in the checkout (HEAD "
                                                f"{_short(head)})")
                else:
                    out[id(ev)] = _RESOLVES
        return out
