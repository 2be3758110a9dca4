"""Batched git access for revalidation: commit existence, diffs against HEAD, blob contents.

Everything goes through the git command line (``subprocess``) and every process started is
counted in :attr:`GitRepo.git_processes`. The number of processes does not depend on the
number of evidence rows:

* commit existence and trees for any number of commits: one ``git cat-file --batch-check``;
* name-status with rename detection (``-M``) of any number of commits against HEAD: one
  ``git diff-tree --stdin`` process;
* zero-context hunks (``-U0``): ``git diff-tree --stdin -p -U0`` processes restricted to a
  few changed paths each, fed every commit that needs one of them; each distinct
  (old blob, new blob) pair is diffed once (run on a small thread pool);
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
    ``added``: files new at HEAD keyed by path. ``scope``: the paths this diff covers (``None``:
    every path); ``absent``: scope paths that exist neither at ``commit`` nor at HEAD. A covered
    path at ``commit`` missing from ``changes`` is unchanged at HEAD (same path, same blob).
    """

    commit: str
    head: str
    changes: dict[str, FileChange] = field(default_factory=dict)
    added: dict[str, FileChange] = field(default_factory=dict)
    scope: frozenset[str] | None = None
    absent: set[str] = field(default_factory=set)

    def change_for(self, path: str) -> FileChange | None:
        """The change of ``path`` (a path at ``commit``), or ``None`` when it is unchanged.
        Raises ``KeyError`` for a path outside :attr:`scope`."""
        if self.scope is not None and path not in self.scope:
            raise KeyError(f"{path} was not diffed for {self.commit[:7]}")
        return self.changes.get(path)

    def exists_at_commit(self, path: str) -> bool:
        """Whether ``path`` (within :attr:`scope`) is a file at ``commit``."""
        return path not in self.added and path not in self.absent


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
    ``workers``: threads running hunk processes (default 4); ``paths_per_process``: file
    paths per hunk process (more: fewer processes, but each prints the other paths' changes
    for every commit it diffs). Nothing is written to the repository.
    """

    def __init__(self, checkout: Path | str, *, git: str = "git", workers: int = 4,
                 paths_per_process: int = 4) -> None:
        self.checkout = Path(checkout)
        self.git = git
        self.workers = max(1, workers)
        self.paths_per_process = max(1, paths_per_process)
        self.git_processes = 0
        self._lock = threading.Lock()
        env = dict(os.environ)
        for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                    "GIT_NAMESPACE", "GIT_PAGER", "PAGER"):
            env.pop(var, None)
        env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANGUAGE="C", GIT_OPTIONAL_LOCKS="0")
        self._env = env
        self._trees: dict[str, str] = {}

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

    def _batch_check(self, names: Sequence[str]) -> list[tuple[str, str] | None]:
        """``(object id, type)`` of each object name (``rev``, ``rev^{tree}``, ``rev:path``), or
        ``None`` when unknown/ambiguous/inexpressible. One ``cat-file --batch-check`` process
        (none for an empty list)."""
        ok = [i for i, n in enumerate(names) if n and "\n" not in n and "\r" not in n
              and not n[0].isspace() and not n.startswith("-")]
        result: list[tuple[str, str] | None] = [None] * len(names)
        if not ok:
            return result
        stdin = b"".join(names[i].encode("utf-8", "surrogateescape") + b"\n" for i in ok)
        out = self._run(["cat-file", "--batch-check=%(objectname) %(objecttype)"], stdin=stdin)
        answers = out.split(b"\n")
        for k, i in enumerate(ok):
            parts = answers[k].split(b" ") if k < len(answers) else []
            if len(parts) == 2 and parts[1] in (b"commit", b"tree", b"blob", b"tag") \
                    and re.fullmatch(rb"[0-9a-f]{40,64}", parts[0]):
                result[i] = (parts[0].decode(), parts[1].decode())
        return result

    def blob_sizes(self, rev: str, paths: Sequence[str]) -> dict[str, int | None]:
        """Size in bytes of each file ``paths`` at ``rev``; None for a path that is no file there or
        whose blob the clone lacks (a partial clone). One ``cat-file --batch-check`` process."""
        names = [f"{rev}:{p}" for p in paths]
        ok = [i for i, n in enumerate(names) if "\n" not in n and "\r" not in n and not n.startswith("-")]
        sizes: dict[str, int | None] = {p: None for p in paths}
        if not ok:
            return sizes
        stdin = b"".join(names[i].encode("utf-8", "surrogateescape") + b"\n" for i in ok)
        out = self._run(["cat-file", "--batch-check=%(objecttype) %(objectsize)"], stdin=stdin, check=False)
        answers = out.split(b"\n")
        for k, i in enumerate(ok):
            parts = answers[k].split(b" ") if k < len(answers) else []
            if len(parts) == 2 and parts[0] == b"blob" and parts[1].isdigit():
                sizes[paths[i]] = int(parts[1])
        return sizes

    def _resolve(self, revs: Sequence[str], extra: Sequence[str] = ()) -> tuple[dict[str, str | None], list]:
        """Resolve ``revs`` to commit shas (remembering their trees) plus look up the object
        names ``extra``, all in one ``cat-file --batch-check``."""
        names: list[str] = []
        query = [r for r in revs if r and _REV_RE.match(r)]
        for r in query:
            names += [f"{r}^{{commit}}", f"{r}^{{tree}}"]
        answers = self._batch_check(names + list(extra))
        resolved: dict[str, str | None] = {r: None for r in revs}
        for i, r in enumerate(query):
            commit, tree = answers[2 * i], answers[2 * i + 1]
            if commit is not None and commit[1] == "commit":
                resolved[r] = commit[0]
                if tree is not None and tree[1] == "tree":
                    self._trees[commit[0]] = tree[0]
        return resolved, answers[len(names):]

    def resolve_commits(self, revs: Iterable[str]) -> dict[str, str | None]:
        """Map each rev (full sha, unique prefix, ``HEAD``, ...) to its full commit sha, or to
        ``None`` when the repository has no such commit (unknown, ambiguous, not a commit,
        malformed). One ``git cat-file --batch-check`` process for all of them (none when
        ``revs`` is empty)."""
        return self._resolve(sorted(set(revs)))[0]

    def has_commit(self, rev: str) -> bool:
        """Whether the repository has the commit ``rev``. One process."""
        return self.resolve_commits([rev])[rev] is not None

    # -- diffs --------------------------------------------------------------------------------

    def _diff_tree_stdin(self, pairs: Sequence[tuple[str, str]], extra: Sequence[str]) -> dict[tuple[str, str], list[FileChange]]:
        """Raw ``-z`` entries of ``git diff-tree --stdin -r <extra>`` for each (old tree, new
        tree) pair, in one process."""
        if not pairs:
            return {}
        stdin = "".join(f"{a} {b}\n" for a, b in pairs).encode()
        out = self._run(["diff-tree", "--stdin", "-r", "--raw", "-z", "--no-ext-diff", *extra],
                        stdin=stdin)
        expected = {f"{a} {b}".encode(): (a, b) for a, b in pairs}
        found: dict[tuple[str, str], list[FileChange]] = {}
        pos, current = 0, None
        while pos < len(out):
            if out[pos:pos + 1] == b":":
                entries, pos = _parse_raw_entries(out, pos)
                if current is not None:
                    found.setdefault(current, []).extend(entries)
                continue
            end = out.find(b"\n", pos)
            end = len(out) if end < 0 else end
            current = expected.get(out[pos:end].strip(b"\0"))
            pos = end + 1
        return found

    def name_status(self, commits: Iterable[str], head: str | None = None,
                    paths: Mapping[str, Iterable[str]] | None = None) -> dict[str, CommitDiff | None]:
        """Name-status with rename detection (``-M``) of each commit against ``head``.

        ``commits``: revs; ``head``: a rev (default ``HEAD``). ``paths=None``: every changed path
        (one unrestricted ``git diff-tree --stdin -r -M`` process for all commits; its output
        grows with everything that changed). ``paths``: per rev, the paths (at that commit) to
        cover; the diff is then restricted to them (``CommitDiff.scope``): their blob ids at the
        commit and at HEAD come from one ``cat-file --batch-check``, and only paths gone at
        HEAD go through rename detection (one ``diff-tree --stdin -M --diff-filter=R``
        process for the commits that have such paths). A rev missing from ``paths`` covers
        no path. Returns, per rev, a :class:`CommitDiff` without hunks, or ``None`` for an
        unknown commit. Raises :class:`GitError` when ``head`` is not a commit.
        """
        revs = sorted(set(commits))
        head = head or "HEAD"
        wanted: dict[str, list[str]] = {}
        extra: list[str] = []
        if paths is not None:
            wanted = {r: sorted(set(paths.get(r, ()))) for r in revs}
            head_paths = sorted({p for ps in wanted.values() for p in ps})
            extra = [f"{head}:{p}" for p in head_paths] + [f"{r}:{p}" for r in revs for p in wanted[r]]
        resolved, answers = self._resolve(sorted(set(revs) | {head}), extra)
        head_sha = resolved[head]
        if head_sha is None or head_sha not in self._trees:
            raise GitError(f"{self.checkout}: {head} is not a commit")
        head_tree = self._trees[head_sha]
        result: dict[str, CommitDiff | None] = {}
        for r in revs:
            sha = resolved[r]
            ok = sha is not None and sha in self._trees
            result[r] = CommitDiff(commit=sha, head=head_sha,
                                   scope=None if paths is None else frozenset(wanted[r])) if ok else None
        if paths is None:
            pairs = sorted({(self._trees[d.commit], head_tree) for d in result.values()
                            if d is not None and self._trees[d.commit] != head_tree})
            found = self._diff_tree_stdin(pairs, ["-M"])
            for diff in result.values():
                if diff is not None:
                    for fc in found.get((self._trees[diff.commit], head_tree), ()):
                        if fc.status in ("A", "C"):
                            diff.added[fc.new_path] = replace(fc, status="A", old_path=None, old_blob=None)
                        else:
                            diff.changes[fc.old_path] = fc
            return result
        # restricted: compare blob ids, then look for renames of the paths gone at HEAD
        at_head: dict[str, str | None] = {}
        i = 0
        for p in sorted({p for ps in wanted.values() for p in ps}):
            ans = answers[i]
            at_head[p] = ans[0] if ans is not None and ans[1] == "blob" else None
            i += 1
        gone: dict[str, list[tuple[str, str]]] = {}
        for r in revs:
            diff = result[r]
            for p in wanted[r]:
                ans = answers[i]
                i += 1
                if diff is None:
                    continue
                old = ans[0] if ans is not None and ans[1] == "blob" else None
                new = at_head[p]
                if old is None:
                    if new is None:
                        diff.absent.add(p)
                    else:
                        diff.added[p] = FileChange("A", None, p, None, new)
                elif new is None:
                    gone.setdefault(r, []).append((p, old))
                elif new != old:
                    diff.changes[p] = FileChange("M", p, p, old, new)
        pairs = sorted({(self._trees[result[r].commit], head_tree) for r in gone})
        renames = self._diff_tree_stdin(pairs, ["-M", "--diff-filter=R"]) if pairs else {}
        for r, items in gone.items():
            diff = result[r]
            moved = {fc.old_path: fc for fc in renames.get((self._trees[diff.commit], head_tree), ())}
            for p, old in items:
                fc = moved.get(p)
                diff.changes[p] = fc if fc is not None else FileChange("D", p, None, old, None)
        return result

    def _hunk_chunk(self, head_tree: str, keys: Sequence[tuple[str, str]],
                    trees: Sequence[str]) -> dict[tuple[str, str, str], tuple[tuple[Hunk, ...], bool]]:
        """Zero-context hunks of the (old_path, new_path) ``keys`` for each old tree in
        ``trees`` against ``head_tree``: one ``git diff-tree --stdin -p -U0 -M`` process
        restricted to those paths. Returns ``{(old_tree, old_path, new_path): (hunks, binary)}``."""
        paths = sorted({p for key in keys for p in key})
        headers = [f"{t} {head_tree}".encode() for t in trees]
        stdin = b"".join(h + b"\n" for h in headers)
        out = self._run(["diff-tree", "--stdin", "-r", "-M", "--raw", "-p", "-U0", "-z",
                         "--no-color", "--no-ext-diff", "--no-textconv", "--", *paths], stdin=stdin)
        # locate each pair's header line (printed in input order) and split the output there
        starts: list[tuple[int, int, int]] = []  # (tree index, header start, body start)
        pos = 0
        for i, h in enumerate(headers):
            at = out.find(h + b"\n", pos)
            while at > 0 and out[at - 1:at] not in (b"\n", b"\0"):
                at = out.find(h + b"\n", at + 1)
            if at < 0:
                continue
            starts.append((i, at, at + len(h) + 1))
            pos = at + len(h) + 1
        wanted = set(keys)
        found: dict[tuple[str, str, str], tuple[tuple[Hunk, ...], bool]] = {}
        for k, (i, _, body) in enumerate(starts):
            stop = starts[k + 1][1] if k + 1 < len(starts) else len(out)
            block = out[body:stop]
            entries, bpos = _parse_raw_entries(block, 0)
            if bpos < len(block) and block[bpos:bpos + 1] == b"\0":
                bpos += 1
            patch = _parse_patch(block[bpos:], len(entries))
            if patch is None:
                continue
            for fc, (hunks, binary) in zip(entries, patch):
                key = (fc.old_path, fc.new_path)
                if key in wanted:
                    found[(trees[i], key[0], key[1])] = (hunks, binary)
        return found

    def diff_many(self, commits: Iterable[str], head: str | None = None,
                  paths: Mapping[str, Iterable[str]] | None = None) -> dict[str, CommitDiff | None]:
        """:meth:`name_status` (``-M``) plus zero-context (``-U0``) hunks of each commit against
        ``head``.

        ``paths``: per rev, the paths (at that commit) to cover (see :meth:`name_status`;
        ``None``: every path). Hunks are computed once per distinct (old blob, new blob) pair
        of a modified or renamed file, by ``git diff-tree --stdin -p -U0`` processes that each
        take every commit needing one of ``paths_per_process`` file paths (so each commit is
        diffed with HEAD once per path it needs, and the process count grows with the number
        of distinct changed paths, never with the number of evidence rows); they run on
        ``workers`` threads. Processes: 1 or 2 for the name-status, plus at most
        ``ceil(changed paths / paths_per_process)``. Returns, per rev, a :class:`CommitDiff`
        (``hunks`` set for modified and renamed files; ``None`` when git's patch could not be
        matched), or ``None`` for an unknown commit.
        """
        diffs = self.name_status(commits, head, paths)
        head_sha = next((d.head for d in diffs.values() if d is not None), None)
        if head_sha is None:
            return diffs
        head_tree = self._trees[head_sha]
        owner: dict[tuple[str, str], tuple[str, str, str]] = {}  # blob pair -> (tree, old, new)
        by_key: dict[tuple[str, str], set[str]] = {}  # (old, new) path -> old trees
        for rev in sorted(diffs):
            diff = diffs[rev]
            if diff is None:
                continue
            tree = self._trees[diff.commit]
            for p in sorted(diff.changes):
                fc = diff.changes[p]
                if fc.status == "D" or fc.old_blob == fc.new_blob:
                    continue
                blobs = (fc.old_blob, fc.new_blob)
                if blobs not in owner:
                    owner[blobs] = (tree, fc.old_path, fc.new_path)
                    by_key.setdefault((fc.old_path, fc.new_path), set()).add(tree)
        computed: dict[tuple[str, str, str], tuple[tuple[Hunk, ...], bool]] = {}
        if by_key:
            keys = sorted(by_key)
            size = max(1, self.paths_per_process)
            jobs = []
            for i in range(0, len(keys), size):
                chunk = keys[i:i + size]
                jobs.append((chunk, sorted(set().union(*(by_key[k] for k in chunk)))))
            with ThreadPoolExecutor(max_workers=min(self.workers, len(jobs))) as pool:
                for found in pool.map(lambda job: self._hunk_chunk(head_tree, *job), jobs):
                    computed.update(found)
        for diff in diffs.values():
            if diff is None:
                continue
            for p, fc in list(diff.changes.items()):
                if fc.status == "D":
                    continue
                if fc.old_blob == fc.new_blob:
                    diff.changes[p] = replace(fc, hunks=())
                elif (fc.old_blob, fc.new_blob) in owner:
                    got = computed.get(owner[(fc.old_blob, fc.new_blob)])
                    if got is not None:
                        diff.changes[p] = replace(fc, hunks=got[0], binary=got[1])
        return diffs

    def diff_since(self, commit: str, paths: Iterable[str] | None = None,
                   head: str | None = None) -> CommitDiff | None:
        """:meth:`diff_many` for one commit: name-status (``-M``) with HEAD plus ``-U0`` hunks,
        for every changed path or only ``paths``. ``None`` when the commit is unknown. At most
        3 git processes (4 when ``paths`` is given and one of them is gone at HEAD)."""
        wanted = None if paths is None else {commit: list(paths)}
        return self.diff_many([commit], head=head, paths=wanted)[commit]

    # -- blobs --------------------------------------------------------------------------------

    def read_blobs(self, specs: Iterable[tuple[str, str] | str]) -> dict[tuple[str, str] | str, Blob | None]:
        """Contents of blobs via one ``git cat-file --batch`` process (none when ``specs`` is empty).

        Each spec is a ``(rev, path)`` pair (``rev`` a commit sha or other rev) or a bare
        object id string. Returns, per distinct spec, a :class:`Blob` (with its object id,
        usable as a cache key) or ``None`` when the rev, path or object is unknown, the path is
        a directory, or the spec cannot be expressed (whitespace in the rev, newline in the path).
        """
        uniq = sorted(set(specs), key=lambda s: (isinstance(s, tuple), s))
        result: dict[tuple[str, str] | str, Blob | None] = {s: None for s in uniq}
        query: list[tuple[tuple[str, str] | str, bytes]] = []
        for spec in uniq:
            if isinstance(spec, tuple):
                rev, path = spec
                if rev and _REV_RE.match(rev) and path and "\n" not in path and "\r" not in path:
                    query.append((spec, rev.encode() + b":" + _encode_path(path)))
            elif spec and _REV_RE.match(spec):
                query.append((spec, spec.encode()))
        if not query:
            return result
        out = self._run(["cat-file", "--batch"], stdin=b"".join(q + b"\n" for _, q in query))
        pos = 0
        for spec, _ in query:
            end = out.index(b"\n", pos)
            header = out[pos:end].split(b" ")
            pos = end + 1
            if (len(header) == 3 and header[2].isdigit()
                    and header[1] in (b"blob", b"tree", b"commit", b"tag")):
                size = int(header[2])
                data = out[pos:pos + size]
                pos += size + 1
                if header[1] == b"blob":
                    result[spec] = Blob(oid=header[0].decode(),
                                        text=data.decode("utf-8", "surrogateescape"),
                                        binary=b"\0" in data[:8000])
        return result

    # -- trees --------------------------------------------------------------------------------

    def ls_files(self, rev: str) -> set[str]:
        """The paths of the files in the tree of ``rev`` (empty when ``rev`` is unknown). One process."""
        if not rev or not _REV_RE.match(rev):
            return set()
        out = self._run(["ls-tree", "-r", "-z", "--name-only", rev], check=False)
        return {_decode_path(p) for p in out.split(b"\0") if p}

    def toplevel(self) -> Path | None:
        """The top-level folder of the work tree holding ``checkout``, or None outside one. One process."""
        out = self._run(["rev-parse", "--show-toplevel"], check=False).decode("utf-8", "surrogateescape").strip()
        return Path(out).resolve() if out else None

    def grep_files(self, rev: str, words: Sequence[str], pathspecs: Sequence[str] = ()) -> set[str]:
        """Paths at ``rev`` whose text contains any of ``words`` as a whole word (fixed strings,
        case-sensitive; binary files skipped): ``git grep -z -l -I -w -F -e w1 -e w2 ... REV --
        pathspecs``. ``pathspecs`` are ordinary git pathspecs (not literal: ``*.py`` matches at
        any depth). One process (none without usable words). Empty set when nothing matches or
        ``rev`` is unknown; files whose blobs git cannot read are left out."""
        words = [w for w in dict.fromkeys(words) if w and "\n" not in w and "\r" not in w]
        if not words or not rev or not _REV_RE.match(rev):
            return set()
        with self._lock:
            self.git_processes += 1
        args = [self.git, "-C", str(self.checkout), "-c", "core.quotepath=off", "grep", "-z", "-l",
                "-I", "-w", "-F", "--no-color", "--no-recurse-submodules"]
        for w in words:
            args += ["-e", w]
        args += [rev, "--", *pathspecs]
        try:
            proc = subprocess.run(args, capture_output=True, env=self._env)
        except OSError as exc:
            raise GitError(f"{self.checkout}: cannot run git: {exc}") from exc
        prefix = rev.encode() + b":"
        return {_decode_path(p[len(prefix):] if p.startswith(prefix) else p)
                for p in proc.stdout.split(b"\0") if p}
