"""Batched git access for revalidation: commit existence, diffs against HEAD, blob contents.

Everything goes through the git command line (``subprocess``) and every process started is
counted in :attr:`GitRepo.git_processes`. The number of processes does not depend on the
number of evidence rows:

* commit existence and trees for any number of commits: one ``git cat-file --batch-check``;
* name-status with rename detection (``-M``) of any number of commits against HEAD: one
  ``git diff-tree --stdin`` process;
* zero-context hunks (``-U0``): at most one ``git diff-tree`` per distinct commit, only for
  commits that have a changed path of interest whose (old blob, new blob) pair no earlier
  commit already covered (run on a small thread pool);
* blob contents for any number of ``(commit, path)`` pairs: one ``git cat-file --batch``.

Unknown commits (force-push, shallow clone, garbage input) are reported (``None``), never raised.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from memtui.domain.spans import Hunk, parse_hunk_header
from memtui.sources.git import SourceError

__all__ = ["GitError", "Blob", "FileChange", "CommitDiff", "GitRepo"]

_ZERO = "0" * 40
_REV_RE = re.compile(r"^[^\s\-][^\s]*$")


class GitError(SourceError):
    """A git command failed for a reason other than an unknown commit (message names the checkout)."""


@dataclass(frozen=True)
class Blob:
    """A blob read from git: its object id and its text (UTF-8, undecodable bytes kept as
    surrogates, so ``text.encode("utf-8", "surrogateescape")`` gives the exact bytes)."""

    oid: str
    text: str
    binary: bool = False


@dataclass(frozen=True)
class FileChange:
    """One changed file between a commit and HEAD.

    ``status``: ``M`` modified, ``A`` added, ``D`` deleted, ``R`` renamed (``score`` = similarity
    percent), ``T`` type changed. ``old_path``/``old_blob`` are ``None`` for ``A``,
    ``new_path``/``new_blob`` ``None`` for ``D``. ``hunks``: the zero-context hunks old -> new
    (``()`` for an exact rename), or ``None`` when not computed (not asked for, deleted or
    added files, or git's output could not be matched). ``binary``: git reported a binary diff.
    """

    status: str
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None
    score: int | None = None
    hunks: tuple[Hunk, ...] | None = None
    binary: bool = False


@dataclass
class CommitDiff:
    """The difference between ``commit`` and ``head`` (both full shas).

    ``changes``: changed files keyed by their path at ``commit`` (statuses M, T, D, R);
    ``added``: files new at HEAD keyed by path. A path at ``commit`` missing from ``changes`` is
    unchanged at HEAD (same path, same blob).
    """

    commit: str
    head: str
    changes: dict[str, FileChange] = field(default_factory=dict)
    added: dict[str, FileChange] = field(default_factory=dict)

    def change_for(self, path: str) -> FileChange | None:
        """The change of ``path`` (a path at ``commit``), or ``None`` when it is unchanged."""
        return self.changes.get(path)


def _decode_path(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _encode_path(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def _parse_raw_entries(data: bytes, pos: int) -> tuple[list[FileChange], int]:
    """Parse ``-z`` raw diff entries from ``data[pos:]`` while they start with ``:``.

    Returns the entries and the position after them.
    """
    out: list[FileChange] = []
    n = len(data)
    while pos < n and data[pos:pos + 1] == b":":
        end = data.index(b"\0", pos)
        meta = data[pos + 1:end].split(b" ")
        pos = end + 1
        # meta: old_mode new_mode old_sha new_sha status
        old_sha, new_sha, status = meta[2].decode(), meta[3].decode(), meta[4].decode()
        end = data.index(b"\0", pos)
        path1 = _decode_path(data[pos:end])
        pos = end + 1
        letter = status[0]
        score = int(status[1:]) if len(status) > 1 and status[1:].isdigit() else None
        if letter in "RC":
            end = data.index(b"\0", pos)
            path2 = _decode_path(data[pos:end])
            pos = end + 1
        else:
            path2 = path1
        old_path = None if letter == "A" else path1
        new_path = None if letter == "D" else path2
        out.append(FileChange(
            status=letter, old_path=old_path, new_path=new_path,
            old_blob=None if old_sha == _ZERO else old_sha,
            new_blob=None if new_sha == _ZERO else new_sha, score=score))
    return out, pos


def _parse_patch(data: bytes, nblocks: int) -> list[tuple[tuple[Hunk, ...], bool]] | None:
    """Split a ``-p -U0`` patch into per-file (hunks, binary); ``None`` when the block count
    does not match ``nblocks`` (the raw entries printed before it)."""
    blocks: list[tuple[list[Hunk], list[bool]]] = []
    for line in data.split(b"\n"):
        if line.startswith(b"diff --git "):
            blocks.append(([], [False]))
        elif not blocks:
            continue
        elif line.startswith(b"@@ -"):
            blocks[-1][0].append(parse_hunk_header(line))
        elif line.startswith(b"Binary files ") or line.startswith(b"GIT binary patch"):
            blocks[-1][1][0] = True
    if len(blocks) != nblocks:
        return None
    return [(tuple(h), b[0]) for h, b in blocks]


class GitRepo:
    """A git checkout read through the git CLI, counting the processes it starts.

    ``checkout``: the working tree (or bare repository) directory. ``git``: the git executable.
    ``workers``: threads running the per-commit hunk processes (default 4).
    Nothing is written to the repository.
    """

    def __init__(self, checkout: Path | str, *, git: str = "git", workers: int = 4) -> None:
        self.checkout = Path(checkout)
        self.git = git
        self.workers = max(1, workers)
        self.git_processes = 0
        self._lock = threading.Lock()
        env = dict(os.environ)
        for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                    "GIT_NAMESPACE", "GIT_PAGER", "PAGER"):
            env.pop(var, None)
        env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANGUAGE="C", GIT_OPTIONAL_LOCKS="0")
        self._env = env
        self._trees: dict[str, str | None] = {}

    # -- plumbing -----------------------------------------------------------------------------

    def _run(self, args: Sequence[str], stdin: bytes | None = None, check: bool = True) -> bytes:
        with self._lock:
            self.git_processes += 1
        cmd = [self.git, "-C", str(self.checkout), "--literal-pathspecs",
               "-c", "core.quotepath=off", *args]
        try:
            proc = subprocess.run(cmd, input=stdin, capture_output=True, env=self._env)
        except OSError as exc:
            raise GitError(f"{self.checkout}: cannot run git: {exc}") from exc
        if check and proc.returncode != 0:
            msg = proc.stderr.decode("utf-8", "replace").strip()
            raise GitError(f"{self.checkout}: git {args[0]} failed: {msg}")
        return proc.stdout

    def head(self) -> str:
        """The full sha of HEAD. Raises :class:`GitError` when ``checkout`` is not a git
        repository or has no commit. One process."""
        out = self._run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False)
        sha = out.decode().strip()
        if not re.fullmatch(r"[0-9a-f]{40,64}", sha):
            raise GitError(f"{self.checkout}: not a git checkout with a HEAD commit")
        return sha

    def resolve_commits(self, revs: Iterable[str]) -> dict[str, str | None]:
        """Map each rev (full sha, unique prefix, ``HEAD``, ...) to its full commit sha, or to
        ``None`` when the repository has no such commit (unknown, ambiguous, not a commit,
        malformed). One ``git cat-file --batch-check`` process for all of them (none when
        ``revs`` is empty). Also remembers each commit's tree for :meth:`name_status`."""
        revs = sorted(set(revs))
        result: dict[str, str | None] = {r: None for r in revs}
        query = [r for r in revs if r and _REV_RE.match(r)]
        if not query:
            return result
        lines = []
        for r in query:
            lines += [f"{r}^{{commit}}", f"{r}^{{tree}}"]
        out = self._run(["cat-file", "--batch-check=%(objectname) %(objecttype)"],
                        stdin=("\n".join(lines) + "\n").encode())
        answers = out.decode("utf-8", "replace").split("\n")
        for i, r in enumerate(query):
            commit_line = answers[2 * i].split() if 2 * i < len(answers) else []
            tree_line = answers[2 * i + 1].split() if 2 * i + 1 < len(answers) else []
            if len(commit_line) == 2 and commit_line[1] == "commit":
                result[r] = commit_line[0]
                if len(tree_line) == 2 and tree_line[1] == "tree":
                    self._trees[commit_line[0]] = tree_line[0]
        return result

    def has_commit(self, rev: str) -> bool:
        """Whether the repository has the commit ``rev``. One process."""
        return self.resolve_commits([rev])[rev] is not None

    # -- diffs --------------------------------------------------------------------------------

    def _tree_of(self, commits: Iterable[str]) -> None:
        missing = [c for c in commits if c not in self._trees]
        if missing:
            self.resolve_commits(missing)

    def name_status(self, commits: Iterable[str], head: str | None = None) -> dict[str, CommitDiff | None]:
        """Name-status with rename detection (``-M``) of each commit against ``head``.

        ``commits``: revs; ``head``: a full sha (default: :meth:`head`). Returns, per input rev,
        a :class:`CommitDiff` without hunks, or ``None`` for an unknown commit. Processes: one
        ``cat-file --batch-check`` for commits not resolved before, one ``diff-tree --stdin``.
        """
        revs = sorted(set(commits))
        head = head or self.head()
        resolved = self.resolve_commits(revs + [head])
        head_sha = resolved[head]
        if head_sha is None:
            raise GitError(f"{self.checkout}: HEAD {head} is not a commit")
        head_tree = self._trees[head_sha]
        result: dict[str, CommitDiff | None] = {}
        pairs: dict[str, list[str]] = {}  # old tree -> full commit shas
        for r in revs:
            sha = resolved[r]
            if sha is None or self._trees.get(sha) is None:
                result[r] = None
                continue
            result[r] = CommitDiff(commit=sha, head=head_sha)
            pairs.setdefault(self._trees[sha], []).append(r)
        todo = [t for t in sorted(pairs) if t != head_tree]
        if not todo:
            return result
        stdin = "".join(f"{t} {head_tree}\n" for t in todo).encode()
        out = self._run(["diff-tree", "--stdin", "-r", "-M", "--raw", "-z", "--no-ext-diff"],
                        stdin=stdin)
        by_tree: dict[str, list[FileChange]] = {}
        pos, current = 0, None
        expected = {f"{t} {head_tree}".encode(): t for t in todo}
        while pos < len(out):
            if out[pos:pos + 1] == b":":
                entries, pos = _parse_raw_entries(out, pos)
                if current is not None:
                    by_tree.setdefault(current, []).extend(entries)
                continue
            end = out.find(b"\n", pos)
            end = len(out) if end < 0 else end
            current = expected.get(out[pos:end].strip(b"\0"))
            pos = end + 1
        for tree, entries in by_tree.items():
            for r in pairs[tree]:
                diff = result[r]
                assert diff is not None
                for fc in entries:
                    if fc.status == "A":
                        diff.added[fc.new_path] = fc
                    elif fc.status == "C":  # not produced with -M alone; keep as an addition
                        diff.added[fc.new_path] = replace(fc, status="A", old_path=None, old_blob=None)
                    else:
                        diff.changes[fc.old_path] = fc
        return result

    def _hunks_for(self, commit: str, head: str,
                   wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], tuple[tuple[Hunk, ...], bool]]:
        """Zero-context hunks of the (old_path, new_path) pairs ``wanted`` between ``commit``
        and ``head``: one ``git diff-tree -p -U0`` restricted to those paths."""
        paths = sorted({p for pair in wanted for p in pair})
        out = self._run(["diff-tree", "-r", "-M", "--raw", "-p", "-U0", "-z", "--no-color",
                         "--no-ext-diff", "--no-textconv", self._trees[commit], self._trees[head],
                         "--", *paths])
        entries, pos = _parse_raw_entries(out, 0)
        if pos < len(out) and out[pos:pos + 1] == b"\0":
            pos += 1
        patch = _parse_patch(out[pos:], len(entries))
        if patch is None:
            return {}
        found = {}
        for fc, (hunks, binary) in zip(entries, patch):
            if fc.old_path is not None and fc.new_path is not None:
                found[(fc.old_path, fc.new_path)] = (hunks, binary)
        return {pair: found[pair] for pair in wanted if pair in found}

    def diff_many(self, commits: Iterable[str], head: str | None = None,
                  paths: Mapping[str, Iterable[str]] | None = None) -> dict[str, CommitDiff | None]:
        """Name-status (``-M``) plus zero-context hunks of each commit against ``head``.

        ``paths``: per rev, the paths (at that commit) whose hunks are wanted; a rev missing
        from ``paths`` (or ``paths=None``) wants every modified or renamed file. Hunks are
        computed once per distinct (old blob, new blob) pair; a commit needs its own
        ``git diff-tree -p -U0`` process only when it has a wanted pair no earlier commit
        (sorted by sha) covered. Processes: at most 2 + one per distinct commit. Returns, per
        rev, a :class:`CommitDiff` (``hunks`` filled for the wanted changed files; ``None``
        when git's patch could not be matched), or ``None`` for an unknown commit.
        """
        head = head or self.head()
        diffs = self.name_status(commits, head)
        head_sha = next((d.head for d in diffs.values() if d is not None), None)
        pair_owner: dict[tuple[str, str], tuple[str, tuple[str, str]]] = {}
        todo: dict[str, list[tuple[str, str]]] = {}
        for rev in sorted(diffs):
            diff = diffs[rev]
            if diff is None:
                continue
            wanted = diff.changes.keys() if paths is None or rev not in paths else paths[rev]
            for p in sorted(set(wanted)):
                fc = diff.changes.get(p)
                if fc is None or fc.status == "D" or fc.old_blob == fc.new_blob:
                    continue
                key = (fc.old_blob, fc.new_blob)
                if key in pair_owner:
                    continue
                pair_owner[key] = (diff.commit, (fc.old_path, fc.new_path))
                todo.setdefault(diff.commit, []).append((fc.old_path, fc.new_path))
        computed: dict[tuple[str, str], tuple[tuple[Hunk, ...], bool]] = {}
        if todo:
            jobs = sorted(todo.items())
            with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
                results = list(pool.map(lambda job: (job, self._hunks_for(job[0], head_sha, job[1])),
                                        jobs))
            for (commit, wanted), found in results:
                for key, (owner, pair) in pair_owner.items():
                    if owner == commit and pair in found:
                        computed[key] = found[pair]
        for rev, diff in diffs.items():
            if diff is None:
                continue
            for p, fc in list(diff.changes.items()):
                if fc.status == "D":
                    continue
                if fc.old_blob == fc.new_blob:
                    diff.changes[p] = replace(fc, hunks=())
                elif (fc.old_blob, fc.new_blob) in computed:
                    hunks, binary = computed[(fc.old_blob, fc.new_blob)]
                    diff.changes[p] = replace(fc, hunks=hunks, binary=binary)
        return diffs

    def diff_since(self, commit: str, paths: Iterable[str] | None = None,
                   head: str | None = None) -> CommitDiff | None:
        """:meth:`diff_many` for one commit: name-status (``-M``) with HEAD plus ``-U0`` hunks of
        the changed ``paths`` (default: every modified or renamed file). ``None`` when the
        commit is unknown. At most 3 processes (4 when ``head`` is not given)."""
        wanted = None if paths is None else {commit: list(paths)}
        return self.diff_many([commit], head=head, paths=wanted)[commit]

    # -- blobs --------------------------------------------------------------------------------

    def read_blobs(self, specs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Blob | None]:
        """Contents of ``(rev, path)`` pairs via one ``git cat-file --batch`` process (none
        when ``specs`` is empty). Returns, per distinct pair, a :class:`Blob` (with its object
        id, usable as a cache key) or ``None`` when the rev or path is unknown, the path is a
        directory, or the pair cannot be expressed (whitespace in the rev, newline in the path).
        """
        specs = sorted(set(specs))
        result: dict[tuple[str, str], Blob | None] = {s: None for s in specs}
        query = [s for s in specs if _REV_RE.match(s[0] or "") and "\n" not in s[1]
                 and "\r" not in s[1]]
        if not query:
            return result
        stdin = b"".join(s[0].encode() + b":" + _encode_path(s[1]) + b"\n" for s in query)
        out = self._run(["cat-file", "--batch"], stdin=stdin)
        pos = 0
        for spec in query:
            end = out.index(b"\n", pos)
            header = out[pos:end].split(b" ")
            pos = end + 1
            if len(header) == 3 and header[2].isdigit() and header[1] in (b"blob", b"tree", b"commit", b"tag"):
                size = int(header[2])
                data = out[pos:pos + size]
                pos += size + 1
                if header[1] == b"blob":
                    result[spec] = Blob(oid=header[0].decode(),
                                        text=data.decode("utf-8", "surrogateescape"),
                                        binary=b"\0" in data[:8000])
        return result
