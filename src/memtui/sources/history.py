"""Where named things went: trees at a revision and moves/deletions along history (issue 8).

Revalidation of a *named reference* (a path, folder or symbol a memory line mentions) asks
whether the thing still exists at HEAD and, when it does not, where it went and which commit
moved or deleted it. Everything goes through :class:`memtui.sources.gitdiff.GitRepo` (counted
processes); nothing here raises for missing objects (partial or shallow clones): when rename
detection over the whole history fails on a blob the clone lacks, it is run again on the commits that
add and delete files, resumed after each of the few git cannot read, and those pair deletions with
additions themselves (same blob, else the one same-named file added); a history that cannot be
read at all is empty.

* :meth:`History.tree` — the files and folders at a revision: one ``git ls-tree -r`` per
  revision (cached).
* :meth:`History.follow` / :meth:`History.follow_many` — paths from an anchor commit to HEAD through
  every rename and deletion on the way: one ``git log --reverse -M --name-status`` over the union of
  the ranges (cached), plus one ``git rev-list`` per anchor to know which of those commits follow it;
  the log is indexed once per anchor by the path each change starts from, so following a path costs
  its own steps, not the length of the history.
* :func:`path_fates` — the same for one checkout, one commit and any number of paths.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

from memtui.sources.gitdiff import GitError, GitRepo

__all__ = ["Tree", "Step", "Trail", "History", "safe_repo_path", "blame_commits", "path_fates"]


def safe_repo_path(path: str | None) -> str | None:
    """``path`` normalised as a repository-relative POSIX path, or None when it cannot name
    anything inside a repository (empty, absolute, leaving the root with ``..``, control
    characters, a ``.git`` component)."""
    if not path or any(ord(c) < 32 or c == "\x7f" for c in path):
        return None
    p = path.replace("\\", "/").strip()
    if p.startswith("/") or (len(p) > 1 and p[1] == ":"):
        return None
    p = p.removeprefix("./").rstrip("/")
    norm = posixpath.normpath(p) if p else ""
    if not norm or norm == "." or norm == ".." or norm.startswith("../"):
        return None
    if ".git" in norm.split("/"):
        return None
    return norm


@dataclass(frozen=True)
class Tree:
    """The files (blobs and links) and folders at one revision, repository-relative."""

    rev: str
    files: frozenset[str]
    dirs: frozenset[str]
    by_name: dict  # basename -> tuple of file paths

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs

    def is_dir(self, path: str) -> bool:
        return path in self.dirs


@dataclass(frozen=True)
class Step:
    """One commit on a path's way: ``kind`` R (renamed to ``new_path``) or D (deleted)."""

    commit: str
    kind: str
    old_path: str
    new_path: str | None


@dataclass(frozen=True)
class Trail:
    """Where a path at an anchor commit is at HEAD: ``path`` (None when deleted) and the steps
    (renames, the deletion) in history order. ``moved`` when the final path differs."""

    start: str
    path: str | None
    steps: tuple[Step, ...]

    @property
    def moved(self) -> bool:
        return self.path is not None and self.path != self.start

    @property
    def last_commit(self) -> str | None:
        return self.steps[-1].commit if self.steps else None


class History:
    """Trees and path moves of one repository, read lazily and cached; see the module doc."""

    def __init__(self, repo: GitRepo, head: str) -> None:
        self.repo = repo
        self.head = head
        self._trees: dict[str, Tree | None] = {}
        self._log: list[tuple[str, list[tuple[str, str, str | None]]]] | None = None
        self._log_anchors: frozenset[str] = frozenset()
        self._after: dict[str, set[str] | None] = {}
        self._index: dict[str, dict[str, tuple[list[int], list[tuple[str, str, str | None]]]]] = {}
        self.errors: list[str] = []

    # -- trees --------------------------------------------------------------------------------

    def tree(self, rev: str) -> Tree | None:
        """The tree at ``rev`` or None when it cannot be read (unknown commit, missing tree)."""
        if rev not in self._trees:
            try:
                out = self.repo._run(["ls-tree", "-r", "-z", "--full-tree", "--name-only", rev, "--"])
            except GitError as exc:
                self.errors.append(str(exc))
                self._trees[rev] = None
                return None
            files = frozenset(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)
            dirs: set[str] = set()
            by_name: dict[str, list[str]] = {}
            for f in files:
                by_name.setdefault(f.rsplit("/", 1)[-1], []).append(f)
                d = f
                while "/" in d:
                    d = d.rsplit("/", 1)[0]
                    if d in dirs:
                        break
                    dirs.add(d)
            self._trees[rev] = Tree(rev, files, frozenset(dirs), {k: tuple(sorted(v)) for k, v in by_name.items()})
        return self._trees[rev]

    # -- history ------------------------------------------------------------------------------

    def _read_log(self, anchors: Sequence[str]) -> None:
        anchors = sorted(set(anchors))
        if self._log is not None and set(anchors) <= self._log_anchors:
            return
        try:
            bases = self.repo._run(["merge-base", "--octopus", *anchors]).decode().split()
        except GitError:
            bases = []
        limit = [f"^{b}" for b in bases[:1]]
        entries = None
        try:
            entries = _parse_name_status(self.repo._run(
                ["log", "-M", "--reverse", "--topo-order", "-z", "--name-status", "--format=%x01%H",
                 "--diff-filter=RD", "--no-color", self.head, *limit, "--"]))
        except GitError as exc:  # an object the clone lacks (partial clone): see _read_log_partial
            self.errors.append(str(exc))
        if entries is None:
            entries = self._read_log_partial(limit)
        self._log = entries
        self._log_anchors = frozenset(anchors)
        self._after.clear()
        self._index.clear()

    #: at most this many ``git log -M`` processes over the commits that add and delete (one more per
    #: commit whose renames git cannot compute)
    max_reruns = 32

    def _read_log_partial(self, limit: list[str]) -> list[tuple[str, list[tuple[str, str, str | None]]]]:
        """The log when rename detection over the whole range fails (a blob the clone lacks): the
        additions and deletions of every commit from the trees alone (``--raw --no-renames`` reads no
        blob), then rename detection for the commits that both add and delete, run again after each one git
        cannot read; those few pair a deletion with an addition of the same blob, else of the only
        same-named file the commit adds. Empty when nothing can be read."""
        try:
            raw = _parse_raw(self.repo._run(
                ["log", "--reverse", "--topo-order", "-z", "--raw", "--no-renames", "--no-abbrev",
                 "--format=%x01%H", "--diff-filter=AD", "--no-color", self.head, *limit, "--"]))
        except GitError as exc:
            self.errors.append(str(exc))
            return []
        candidates = [sha for sha, changes in raw if {c[0] for c in changes} >= {"A", "D"}]
        renamed: dict[str, list[tuple[str, str, str | None]]] = {}
        i, runs = 0, 0
        while i < len(candidates) and runs < self.max_reruns:
            # git prints each commit once its renames are computed, in the order given: the commits
            # printed before a failure are complete, the next one is the one it cannot read
            runs += 1
            out = self.repo._run(["log", "--no-walk=unsorted", "--stdin", "-M", "-z", "--name-status",
                                  "--format=%x01%H", "--diff-filter=RD", "--no-color"],
                                 stdin=("\n".join(candidates[i:]) + "\n").encode(), check=False)
            found = _parse_name_status(out)
            if [sha for sha, _ in found] != candidates[i:i + len(found)]:
                break  # not the order asked for: trust none of it
            if found and not found[-1][1] and i + len(found) < len(candidates):
                found.pop()  # a commit that adds and deletes shows a change: this one was cut short
            renamed.update(found)
            i += len(found) + 1  # skip the commit git could not read (it is paired below)
        entries: list[tuple[str, list[tuple[str, str, str | None]]]] = []
        for sha, changes in raw:
            if sha in renamed:
                entries.append((sha, renamed[sha]))
            elif sha in candidates:
                entries.append((sha, _pair_moves(changes)))
            else:
                entries.append((sha, [("D", path, None) for kind, path, _ in changes if kind == "D"]))
        return entries

    def _commits_after(self, anchor: str) -> set[str] | None:
        if anchor not in self._after:
            try:
                out = self.repo._run(["rev-list", self.head, f"^{anchor}", "--"])
                self._after[anchor] = set(out.decode().split())
            except GitError as exc:
                self.errors.append(str(exc))
                self._after[anchor] = None
        return self._after[anchor]

    def prepare(self, anchors: Iterable[str]) -> None:
        """Read the history once for every anchor that will be followed from (optional: the
        first :meth:`follow` reads it for its own anchor otherwise)."""
        anchors = sorted(set(a for a in anchors if a))
        if anchors:
            self._read_log(sorted(set(anchors) | set(self._log_anchors)))

    def follow(self, anchor: str, path: str) -> Trail:
        """``path`` (a file at ``anchor``) followed to HEAD through renames and deletions.

        A rename chain ending at a path that exists at HEAD gives that path; a deletion (and no
        later rename of the same path) gives ``path=None`` with the deleting commit as the last
        step; a path never touched in between stays itself."""
        if anchor not in self._log_anchors:
            self._read_log(sorted(self._log_anchors | {anchor}))
        by_old = self._changes_after(anchor)
        cur: str | None = path
        steps: list[Step] = []
        at = -1  # the position in the log of the last step taken: the next one comes later
        while cur is not None and cur in by_old:
            positions, changes = by_old[cur]
            k = bisect_right(positions, at)
            if k == len(positions):
                break
            at = positions[k]
            sha, kind, new = changes[k]
            steps.append(Step(sha, kind, cur, new))
            cur = new
        return Trail(path, cur, tuple(steps))

    def follow_many(self, anchor: str, paths: Iterable[str]) -> dict[str, Trail]:
        """:meth:`follow` for each of ``paths`` (one log read for all of them)."""
        return {p: self.follow(anchor, p) for p in dict.fromkeys(paths)}

    def _changes_after(self, anchor: str) -> dict[str, tuple[list[int], list[tuple[str, str, str | None]]]]:
        """The log's changes in commits after ``anchor``, by the path they start from: path ->
        (positions in the log, [(commit, R|D, new path)]), in log order, the first change of a path
        in a commit only (what :meth:`follow` takes)."""
        if anchor not in self._index:
            after = self._commits_after(anchor)
            by_old: dict[str, tuple[list[int], list[tuple[str, str, str | None]]]] = {}
            for i, (sha, changes) in enumerate(self._log or ()):
                if after is not None and sha not in after:
                    continue
                for kind, old, new in changes:
                    positions, found = by_old.setdefault(old, ([], []))
                    if positions and positions[-1] == i:
                        continue  # a path's first change in a commit is the one followed
                    positions.append(i)
                    found.append((sha, kind, new))
            self._index[anchor] = by_old
        return self._index[anchor]

    def last_change_of(self, anchor: str, paths: Sequence[str], word: str) -> str | None:
        """The newest commit after ``anchor`` that changed how often ``word`` occurs in ``paths``
        (``git log -S``: where a definition was removed), or None. One process."""
        try:
            out = self.repo._run(["log", "-1", "--format=%H", f"-S{word}", f"{anchor}..{self.head}", "--", *paths])
        except GitError:
            return None
        return out.decode().strip() or None


def _parse_name_status(out: bytes) -> list[tuple[str, list[tuple[str, str, str | None]]]]:
    """``git log -z --name-status --format=%x01%H`` output as ``[(sha, [(R|D, old, new or None)])]``."""
    entries: list[tuple[str, list[tuple[str, str, str | None]]]] = []
    for chunk in out.split(b"\x01")[1:]:
        parts = chunk.split(b"\0")
        head = parts[0].strip()
        sha = head.split(b"\n")[0].decode()
        changes: list[tuple[str, str, str | None]] = []
        # after the sha line: "\n" then "STATUS\0path\0[path\0]" repeated
        tokens = list(parts[1:])
        rest = head.split(b"\n", 1)[1] if b"\n" in head else b""
        if rest:
            tokens.insert(0, rest)
        i = 0
        while i < len(tokens):
            status = tokens[i].strip().decode("utf-8", "replace")
            if not status:
                i += 1
                continue
            if status.startswith("R"):
                old = tokens[i + 1].decode("utf-8", "surrogateescape") if i + 1 < len(tokens) else ""
                new = tokens[i + 2].decode("utf-8", "surrogateescape") if i + 2 < len(tokens) else ""
                changes.append(("R", old, new))
                i += 3
            elif status.startswith("D"):
                old = tokens[i + 1].decode("utf-8", "surrogateescape") if i + 1 < len(tokens) else ""
                changes.append(("D", old, None))
                i += 2
            else:
                i += 2
        entries.append((sha, changes))
    return entries


def _parse_raw(out: bytes) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """``git log -z --raw --no-renames --no-abbrev --format=%x01%H`` output as
    ``[(sha, [(A|D, path, blob id)])]`` (the blob added, or the one deleted)."""
    entries: list[tuple[str, list[tuple[str, str, str]]]] = []
    for chunk in out.split(b"\x01")[1:]:
        parts = chunk.split(b"\0")
        sha = parts[0].strip().decode()
        changes: list[tuple[str, str, str]] = []
        i = 1
        while i + 1 < len(parts):
            meta = parts[i].strip().split()
            if len(meta) >= 5 and meta[0].startswith(b":"):
                kind = meta[4].decode()[:1]
                oid = (meta[2] if kind == "D" else meta[3]).decode()
                changes.append((kind, parts[i + 1].decode("utf-8", "surrogateescape"), oid))
                i += 2
            else:
                i += 1
        entries.append((sha, changes))
    return entries


def _pair_moves(changes: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str | None]]:
    """One commit's additions and deletions as renames where git could not compute them: a deleted
    blob added again elsewhere (the same content), else a deleted file whose name the commit adds at
    exactly one path (and deletes at no other); the other deletions stay deletions."""
    added = [(p, oid) for kind, p, oid in changes if kind == "A"]
    deleted = [(p, oid) for kind, p, oid in changes if kind == "D"]
    by_oid: dict[str, list[str]] = {}
    for p, oid in added:
        by_oid.setdefault(oid, []).append(p)
    name_of = lambda p: p.rsplit("/", 1)[-1]  # noqa: E731
    added_by_name: dict[str, list[str]] = {}
    for p, _ in added:
        added_by_name.setdefault(name_of(p), []).append(p)
    deleted_names: dict[str, int] = {}
    for p, _ in deleted:
        deleted_names[name_of(p)] = deleted_names.get(name_of(p), 0) + 1
    taken: set[str] = set()
    out: list[tuple[str, str, str | None]] = []
    for p, oid in deleted:
        same = [q for q in by_oid.get(oid, ()) if q not in taken]
        if not same:
            named = [q for q in added_by_name.get(name_of(p), ()) if q not in taken]
            same = named if len(named) == 1 and deleted_names[name_of(p)] == 1 else []
        if same:
            taken.add(same[0])
            out.append(("R", p, same[0]))
        else:
            out.append(("D", p, None))
    return out


def blame_commits(repo: GitRepo, path: str) -> dict[int, str]:
    """For each 1-based line of the working-tree file ``path`` (repository-relative), the commit
    that last changed it; lines not committed yet are left out. One ``git blame --porcelain``
    process; an untracked file gives ``{}``."""
    try:
        out = repo._run(["blame", "--porcelain", "--", path])
    except GitError:
        return {}
    found: dict[int, str] = {}
    for line in out.split(b"\n"):
        parts = line.split(b" ")
        if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit() and parts[2].isdigit():
            sha = parts[0].decode()
            if sha != "0" * 40:
                found[int(parts[2])] = sha
    return found


def path_fates(checkout: Path | str | GitRepo, since: str, paths: Iterable[str],
               head: str | None = None) -> dict[str, Trail]:
    """Where each of ``paths`` (files at commit ``since``) is at ``head`` (default HEAD) of the git
    checkout ``checkout``: per path its :class:`Trail` (renames followed, the deletion, or unchanged).
    One ``git log -M --name-status`` pass over the commits since ``since`` for all the paths (and a
    ``git rev-list``). Raises :class:`~memtui.sources.gitdiff.GitError` when ``checkout`` has no HEAD."""
    repo = checkout if isinstance(checkout, GitRepo) else GitRepo(Path(checkout))
    history = History(repo, head or repo.head())
    history.prepare([since])
    return history.follow_many(since, paths)
