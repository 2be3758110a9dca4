"""Named references: what a memory line *names* is checked for existence and location (issue 8).

A line that names a file, folder, glob or symbol claims that the thing exists (and, for a
symbol, where it is defined); it does not quote the thing's content. So a named reference is
never ``changed`` because its file was edited. Evidence rows with ``ref == "mention"`` are
named references; ``ref == "example"`` marks a placeholder ("e.g. `my_handler.py`"), never
checked. ``target`` holds the reference as written in the line (reasons name it), ``path`` the
repository path it resolved to at the anchor commit ``commit_sha`` (for a symbol: the file
defining it then, or None when it was defined nowhere).

Outcomes (``EvidenceCheck.status`` / ``reason_code``), design "revalidate":

* exists at HEAD where written → ``valid`` / ``exists``;
* a symbol defined at HEAD in another file → ``valid`` / ``symbol_relocated`` ("now at PATH:LINE");
* a file or folder moved (rename chain through history, :class:`memtui.sources.history.History`;
  a module that became a package, ``x.py`` -> ``x/__init__.py``; a folder whose followed files mostly
  sit under one new folder whatever their new layout; failing that, the only file or folder of the
  same name at HEAD) → ``changed`` / ``path_moved``, ``current_path`` the new path, the reason naming
  the commit ("was moved to NEW in C"); a name resolved by suffix when written that exists as written
  at HEAD is ``valid``;
* a symbol defined nowhere at HEAD whose file (followed) defines, where it stood, the same last name
  part or a similar name → ``changed`` / ``symbol_renamed`` ("renamed to NEW (PATH:LINE) in C",
  ``renamed_to`` written as the line wrote the old name, for the proposed edit);
* gone at HEAD → ``deleted`` / ``file_deleted``, ``folder_deleted``, ``glob_unmatched`` or
  ``referenced_symbol_deleted`` (severity high), naming the commit that deleted it when history
  shows one (also for a symbol defined in several files when written, which the importer records in
  the evidence's ``excerpt``: "defined in N files: ...");
* absent at the anchor commit already → ``unresolvable`` / ``reference_unresolvable``
  (severity low): it never existed, so it did not go stale;
* a path that cannot name anything in a repository (absolute, ``..``) or an anchor commit the
  clone does not hold → ``unverifiable`` (``bad_path`` / ``commit_unknown``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from typing import Any, Callable, Sequence

from memtui.domain.globs import glob_match
from memtui.sources.gitdiff import GitError, GitRepo
from memtui.sources.history import History, Tree, safe_repo_path
from memtui.sources.symbols import language_for

__all__ = ["is_named_reference", "is_example", "check_references", "written", "rewrite_reference",
           "propose_statement", "not_in_repository"]

_SYMBOL_TYPES = ("symbol",)
_MAX_FOLDER_FILES = 200


def is_named_reference(ev: Any) -> bool:
    """Whether evidence row ``ev`` is a named reference (``ref == "mention"``)."""
    return (ev.ref or "") == "mention" and ev.type in ("file_span", "folder", "glob", "symbol", "doc", "ref")


def is_example(ev: Any) -> bool:
    """Whether ``ev`` is an example placeholder a line shows (never checked)."""
    return (ev.ref or "") == "example"


def written(ev: Any) -> str:
    """The reference as the line wrote it (``target``), else its path or symbol."""
    return ev.target or ev.symbol or ev.path or "?"


def _named(ev: Any) -> str:
    """How a reason names the reference: as written, with the path it resolved to when that
    differs (``balance.rb (app/models/account/balance.rb)``), so both can be found in the reason."""
    w = written(ev)
    if ev.type != "symbol" and ev.path and ev.path.rstrip("/") != w.rstrip("/").removeprefix("./"):
        return f"{w} ({ev.path})"
    return w


def _short(sha: str | None) -> str:
    return (sha or "")[:7]


_HOME_PATH = re.compile(r"^(?:~|\$\{?HOME\}?|%USERPROFILE%|\$env:USERPROFILE)(?:[/\\]|$)", re.I)
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|www\.|mailto:)", re.I)
_SYSTEM_ROOTS = frozenset({"etc", "usr", "var", "opt", "tmp", "proc", "sys", "dev", "bin", "sbin", "lib", "lib64",
                           "home", "root", "Users", "Library", "System", "Applications", "Volumes", "private",
                           "mnt", "run", "srv", "nix", "snap", "workspace", "workspaces"})
_REGISTRIES = re.compile(r"^(?:ghcr\.io|docker\.io|quay\.io|gcr\.io|[a-z0-9-]+\.gcr\.io|mcr\.microsoft\.com|"
                         r"public\.ecr\.aws|registry\.[\w.-]+|[\w-]+\.azurecr\.io|[\w.-]+\.dkr\.ecr\.[\w.-]+)/")
_IMAGE_TAG = re.compile(r"^[a-z0-9][a-z0-9._-]*(?::\d+)?(?:/[a-z0-9][a-z0-9._-]*)*"
                        r"(?::[\w][\w.-]{0,127}|@sha256:[0-9a-f]{12,64})$")
_GIT_REF = re.compile(r"^(?:refs/(?:heads|tags|remotes|pull|notes)/\S+|(?:origin|upstream)/[\w./-]+|"
                      r"HEAD(?:[~^]\d*)*|[\w./-]+\.\.\.?[\w./-]+)$")
_CREDENTIAL = re.compile(r"^(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_\w{20,}|glpat-[\w-]{16,}|xox[abposr]-[\w-]{10,}|"
                         r"sk-[\w-]{16,}|AKIA[0-9A-Z]{16}|AIza[\w-]{30,}|[\w.+-]+:[^\s:@/]+@[\w.-]+)$")
_ISSUE = re.compile(r"^(?:[\w.-]+/[\w.-]+)?#\d+$|^(?:GH|gh)-\d+$")


def not_in_repository(written_as: str, *, existed: bool = False) -> str | None:
    """What a reference written ``written_as`` names outside the repository, or None when it may name
    something inside it: a home-directory path (``~/...``, ``$HOME/...``) or a URL always; a system path
    (``/etc/...``), a Docker image (``python:3.11-slim``, ``ghcr.io/acme/tool``), a git ref (``origin/main``,
    ``refs/heads/x``, ``main..topic``) or an issue reference (``owner/repo#123``) when no such path
    ``existed`` in the repository (issue 23, item 2). A credential (``ghp_...``, ``AKIA...``, ``user:pass@host``)
    is never a reference."""
    w = (written_as or "").strip().strip("`'\"")
    if _HOME_PATH.match(w):
        return "a path in the home directory"
    if _URL.match(w):
        return "a URL"
    if _CREDENTIAL.match(w):
        return "a credential"
    if existed:
        return None
    if w.startswith("/") and w.lstrip("/").split("/", 1)[0] in _SYSTEM_ROOTS:
        return "a system path"
    if _ISSUE.match(w):
        return "an issue reference"
    if _GIT_REF.match(w):
        return "a git ref"
    name = re.split(r"[:@]", w, maxsplit=1)[0].rsplit("/", 1)[-1]
    if _REGISTRIES.match(w) or (w.count("/") <= 2 and "." not in name and _IMAGE_TAG.match(w)):
        return "a Docker image"  # not src/app.py:12 (a file and a line)
    return None


class _Checker:
    def __init__(self, repo: GitRepo, head: str, history: History, make_result: Callable) -> None:
        self.repo = repo
        self.head = head
        self.history = history
        self.result = make_result
        self.head_tree = history.tree(head)
        self._dir_names: dict[str, tuple[str, ...]] | None = None
        self._sorted: dict[str, list[str]] = {}  # files of a tree, sorted (folder contents by bisection)

    def dir_by_name(self) -> dict[str, tuple[str, ...]]:
        if self._dir_names is None:
            out: dict[str, list[str]] = {}
            for d in self.head_tree.dirs if self.head_tree else ():
                out.setdefault(d.rsplit("/", 1)[-1], []).append(d)
            self._dir_names = {k: tuple(sorted(v)) for k, v in out.items()}
        return self._dir_names

    # -- paths -------------------------------------------------------------------------------

    def check_path(self, ev, kind: str):
        w, anchor = _named(ev), ev.commit_sha
        path = safe_repo_path(ev.path)
        if path is None:
            return self.result(ev, "unverifiable", "bad_path",
                               f"{w}: evidence path {ev.path!r} cannot name a file inside the repository", "medium")
        at = self.history.tree(anchor)
        if at is None or self.head_tree is None:
            return self.result(ev, "unverifiable", "commit_unknown",
                               f"{w}: commit {_short(anchor)} is not in this clone (force-push or shallow clone?)",
                               "medium")
        if kind == "glob":
            return self.check_glob(ev, w, path, at)
        if self.head_tree.exists(path) and (not at.exists(path) or self.head_tree.is_dir(path) == at.is_dir(path)):
            moved = self._folder_emptied(anchor, path, at) if at.is_dir(path) else None
            if moved is not None:  # internal/agent/ at HEAD is another package: the old one went elsewhere
                new, commit = moved
                return self.result(ev, "changed", "path_moved",
                                   f"{w} was moved to {new} in {_short(commit)} ({path} at HEAD holds other files)",
                                   "medium", new, moved_in=commit)
            return self.result(ev, "valid", "exists", f"{w} exists at HEAD", "none", path)
        if not at.exists(path):
            outside = not_in_repository(written(ev))
            if outside:  # /etc/..., python:3.11-slim, origin/main, acme/tool#12: nothing in the repository
                return self.result(ev, "unchecked", "not_checkable",
                                   f"{written(ev)} is {outside}, not a repository path (not checked)", "none")
            return self.result(ev, "unresolvable", "reference_unresolvable",
                               f"{w} did not exist at {_short(anchor)} (never existed, not stale)", "low")
        folder = at.is_dir(path)
        noun = "folder" if folder else "file"
        new, commit, how = (self._folder_move(anchor, path, at) if folder else self._file_move(anchor, path, at))
        if how == "split":  # no folder took most of its files: nothing to rewrite the line to
            where = f" in {_short(commit)}" if commit else f" since {_short(anchor)}"
            return self.result(ev, "deleted", "folder_split", f"{w} was split{where}: its files went to {new}",
                               "high", moved_in=commit)
        if new is not None and new.rstrip("/") == written(ev).strip().lstrip("/").removeprefix("./").rstrip("/"):
            # resolved elsewhere when written (by suffix); the name as written exists now: nothing to edit
            return self.result(ev, "valid", "exists", f"{written(ev)} exists at HEAD as written", "none", new)
        if new is not None:
            where = f" in {_short(commit)}" if commit else ""
            why = f"{w} was moved to {new}{where}" if how == "history" else \
                f"{w} is gone; the only {noun} of that name at HEAD is {new}" + (
                    f" ({w} removed in {_short(commit)})" if commit else "")
            return self.result(ev, "changed", "path_moved", why, "medium", new, moved_in=commit)
        where = f" in {_short(commit)}" if commit else f" since {_short(anchor)}"
        return self.result(ev, "deleted", "folder_deleted" if folder else "file_deleted",
                           f"{w} was deleted{where}", "high", moved_in=commit)

    def _folder_emptied(self, anchor: str, path: str, at: Tree) -> tuple[str, str | None] | None:
        """(new folder, commit) when a folder that exists at HEAD kept at most a tenth of its files (of
        three at least) and none of its subfolders, and git followed the rest to one new folder outside it:
        the name was reused for something else."""
        prefix = path + "/"
        if at.rev not in self._sorted:
            self._sorted[at.rev] = sorted(at.files)
        files = self._sorted[at.rev]
        inside = []
        for f in files[bisect_left(files, prefix):]:
            if not f.startswith(prefix):
                break
            inside.append(f)
        if len(inside) < 3 or sum(f in self.head_tree.files for f in inside) * 10 > len(inside):
            return None
        if any(self.head_tree.is_dir(prefix + f[len(prefix):].split("/", 1)[0]) for f in inside
               if "/" in f[len(prefix):]):
            return None  # a subfolder of it is still there (testing/cli_tests/): thinned out, not reused
        new, commit, how = self._folder_move(anchor, path, at)
        if how != "history" or not new or new == path or new.startswith(prefix) or path.startswith(new + "/"):
            return None  # restructured inside itself (crates/obs/src/... -> crates/obs/src/metrics/...): still there
        return new, commit

    def _file_move(self, anchor: str, path: str, at: Tree) -> tuple[str | None, str | None, str]:
        trail = self.history.follow(anchor, path)
        if trail.path is not None and trail.path != path and self.head_tree.exists(trail.path):
            return trail.path, trail.last_commit, "history"
        commit = trail.steps[0].commit if trail.steps else None
        last = next((st.new_path for st in reversed(trail.steps) if st.kind == "R" and st.new_path), None)
        for was in dict.fromkeys([last, path]):
            package = self._package_of(was) if was else None
            if package is not None:  # a module that became a package: sub_agent.py -> sub_agent/__init__.py
                return package, trail.last_commit, "history"
        same = self._same_name(path, at)
        return (same, commit, "name") if same else (None, commit, "")

    def _package_of(self, module: str) -> str | None:
        """The package file at HEAD that module file ``module`` became (``x.py`` -> ``x/__init__.py``,
        ``x.rs`` -> ``x/mod.rs``, ``x.ts`` -> ``x/index.ts``), when it exists and the module does not."""
        stem, dot, ext = module.rpartition(".")
        if not dot or self.head_tree.exists(module):
            return None
        inits = {"py": ("__init__.py",), "rs": ("mod.rs",), "ts": ("index.ts", "index.tsx"), "tsx": ("index.tsx",),
                 "js": ("index.js",), "mjs": ("index.mjs",), "jsx": ("index.jsx",)}.get(ext, ())
        return next((f"{stem}/{i}" for i in inits if self.head_tree.exists(f"{stem}/{i}")), None)

    def _same_name(self, path: str, at: Tree) -> str | None:
        """The one file at HEAD (new since the anchor) ending with the longest tail of ``path``
        that only one such file has: ``.claude-plugin/plugin.json`` before ``plugin.json``."""
        parts = path.split("/")
        name = parts[-1]
        cands = [p for p in self.head_tree.by_name.get(name, ()) if not at.exists(p)]
        for k in range(len(parts), 0, -1):
            tail = "/".join(parts[-k:])
            hits = [p for p in cands if p == tail or p.endswith("/" + tail)]
            if len(hits) == 1:
                return hits[0]
            if len(hits) > 1:
                return None
        return None

    def _folder_move(self, anchor: str, path: str, at: Tree) -> tuple[str | None, str | None, str]:
        """(new folder, commit, how): how is ``history`` (its files were renamed there), ``name``
        (the only folder of that name, or where same-named files reappeared), ``split`` (new is
        then the folders its files went to) or ``""`` (gone)."""
        prefix = path + "/"
        inside = sorted(f for f in at.files if f.startswith(prefix))[:_MAX_FOLDER_FILES]
        weight = self._weights(anchor, inside)
        targets: Counter = Counter()  # weighed by size (see _weights); counts: files
        counts: Counter = Counter()
        commits: Counter = Counter()
        deleted_in: Counter = Counter()
        named: Counter = Counter()
        ends: list[tuple[str, str | None, str]] = []  # (HEAD path, commit, path below the folder) of followed files
        for f in inside:
            rest = f[len(prefix):]
            trail = self.history.follow(anchor, f)
            if trail.path is not None and trail.path != f and self.head_tree.exists(trail.path):
                ends.append((trail.path, trail.last_commit, rest))
            if trail.path is None or trail.path == f or not self.head_tree.exists(trail.path):
                if trail.steps:
                    deleted_in[trail.last_commit] += 1
                renames = [st for st in trail.steps if st.kind == "R" and st.new_path]
                if renames and renames[-1].new_path.endswith("/" + rest):
                    # moved with the folder, deleted later: the folder still went there
                    targets[renames[-1].new_path[:-len(rest) - 1]] += weight[f]
                    counts[renames[-1].new_path[:-len(rest) - 1]] += 1
                    commits[renames[-1].commit] += 1
                    continue
                same = self._same_name(f, at)  # delete + add in a restructuring
                if same and same.endswith("/" + rest):
                    named[same[:-len(rest) - 1]] += weight[f]
                    counts[same[:-len(rest) - 1]] += 1
                continue
            if trail.path.endswith("/" + rest):
                new_dir = trail.path[:-len(rest) - 1]
                targets[new_dir] += weight[f]
                counts[new_dir] += 1
                commits[trail.last_commit] += 1
        covering = self._covering(ends, at, len(inside))
        if covering is not None:
            return covering[0], covering[1], "history"
        votes = targets + named
        if votes:
            total = sum(weight.values())
            new_dir, n = votes.most_common(1)[0]
            split = [d for d, _ in votes.most_common(3)]
            if n * 2 <= sum(votes.values()) and len(split) > 1:
                # no folder took most of its content: a split, not a move (nothing to rewrite)
                return ", ".join(split), commits.most_common(1)[0][0] if commits else None, "split"
            # a folder new at HEAD that a third of the content went to, or an existing one that most of it
            # went to keeping its layout (plugin/{idp,webhook}/... -> internal/{idp,webhook}/...)
            into = new_dir and at.is_dir(new_dir) and (targets[new_dir] * 2 > total or counts[new_dir] * 2 > len(inside))
            enough = n * 3 >= total or counts[new_dir] * 3 >= len(inside)
            if enough and self.head_tree.is_dir(new_dir) and (not at.is_dir(new_dir) or into):
                commit = commits.most_common(1)[0][0] if commits else (
                    deleted_in.most_common(1)[0][0] if deleted_in else None)
                return new_dir, commit, "history" if targets[new_dir] else "name"
        commit = deleted_in.most_common(1)[0][0] if deleted_in else (
            commits.most_common(1)[0][0] if commits else None)
        name = path.rsplit("/", 1)[-1]
        same = [d for d in self.dir_by_name().get(name, ()) if not at.is_dir(d)]
        if len(same) == 1:
            return same[0], commit, "name"
        return None, commit, ""

    def _weights(self, anchor: str, files: list[str]) -> dict[str, int]:
        """How much each of a folder's files weighs in a vote on where the folder went: its size at
        ``anchor`` in bytes (so ``workers.rs`` outweighs the ``Cargo.toml`` and two-line ``lib.rs`` that
        git paired with another crate), from 256 to 64 KiB (a test database does not outweigh the code);
        a blob the clone lacks weighs as the folder's largest file."""
        try:
            sizes = self.repo.blob_sizes(anchor, files) if files else {}
        except GitError:
            sizes = {}
        known = [v for v in sizes.values() if v is not None]
        fallback = max(known) if known else 256
        return {f: min(1 << 16, max(256, sizes.get(f) if sizes.get(f) is not None else fallback)) for f in files}

    def _covering(self, ends: list[tuple[str, str | None, str]], at: Tree, total: int):
        """(folder, commit): the deepest folder new at HEAD under which most of a folder's children went
        (each direct file and each subfolder one vote, a subfolder voting where most of its followed files
        are), whatever their new layout below it (src/adapters/github.ts ->
        packages/adapters/src/forge/github/adapter.ts; core/tool/x.py -> tool/file/x.py). A file that
        kept its place below the folder counts for the folder it implies (pkg/client/a.go ->
        go/api/client/a.go counts for go/api). ``total``: the folder's files (a third of them must have
        been followed). None when no folder holds a majority of the children."""
        if not ends or len(ends) * 3 < total:
            return None
        children: dict[str, list[tuple[str, str | None]]] = {}
        for new, commit, rest in ends:
            d = new[:-len(rest) - 1] if new.endswith("/" + rest) else (new.rsplit("/", 1)[0] if "/" in new else "")
            children.setdefault(rest.split("/", 1)[0], []).append((d, commit))
        cover: Counter = Counter()
        commits: dict[str, Counter] = {}
        for landed in children.values():
            here: Counter = Counter()
            for d, commit in landed:
                while d:
                    here[d] += 1
                    commits.setdefault(d, Counter())[commit] += 1
                    d = d.rsplit("/", 1)[0] if "/" in d else ""
            for d, n in here.items():
                if n * 2 > len(landed):
                    cover[d] += 1
        best = None
        for d, n in cover.items():
            if n * 2 > len(children) and self.head_tree.is_dir(d) and not at.is_dir(d) and \
                    (best is None or d.count("/") > best.count("/")):
                best = d
        return (best, commits[best].most_common(1)[0][0]) if best else None

    def check_glob(self, ev, w: str, pattern: str, at: Tree):
        if not glob_match(pattern, at.files):
            return self.result(ev, "unresolvable", "reference_unresolvable",
                               f"{w} matched no file at {_short(ev.commit_sha)} (never existed, not stale)", "low")
        now = glob_match(pattern, self.head_tree.files)
        if now:
            return self.result(ev, "valid", "exists", f"{w} matches {len(now)} file(s) at HEAD", "none")
        moved, commit = self._glob_move(ev.commit_sha, pattern, glob_match(pattern, at.files), at)
        if moved:
            where = f" in {_short(commit)}" if commit else ""
            return self.result(ev, "changed", "path_moved", f"{w} was moved to {moved}{where}", "medium", moved,
                               moved_in=commit)
        return self.result(ev, "deleted", "glob_unmatched", f"{w} matches no file at HEAD any more", "high")

    def _glob_move(self, anchor: str, pattern: str, matched: list[str],
                   at: Tree | None = None) -> tuple[str | None, str | None]:
        """The glob with its literal folder replaced by where most of its files went, if they went
        to one folder (``testing/*.test`` -> ``testing/system/*.test``), renamed or deleted and added
        again under the same name (``at``: the anchor's tree), when a third of the files it matched went
        there; or, most of them deleted, when at least two and most of those git followed to a name it
        still matches went there (``testing/system/*.test``, not a vendored folder sharing some names)."""
        segs = pattern.removeprefix("./").split("/")
        lit = []
        for seg in segs[:-1]:
            if any(c in seg for c in "*?[{"):
                break
            lit.append(seg)
        prefix = "/".join(lit)
        votes: Counter = Counter()  # followed through history, or deleted and added again by name
        renamed: Counter = Counter()  # followed through history only
        commits: dict[str, Counter] = {}
        for f in matched[:_MAX_FOLDER_FILES]:
            rest = f[len(prefix) + 1:] if prefix else f
            trail = self.history.follow(anchor, f)
            if trail.path and trail.path != f and trail.path.endswith("/" + rest):
                new = trail.path[:-len(rest) - 1]
                renamed[new] += 1
            elif trail.path is None and at is not None:  # deleted, and added again elsewhere (a restructuring)
                same = self._same_name(f, at)
                if not (same and same.endswith("/" + rest)):
                    continue
                new = same[:-len(rest) - 1]
            else:
                continue
            votes[new] += 1
            commits.setdefault(new, Counter())[trail.last_commit] += 1
        if not votes:
            return None, None
        new_prefix, n = votes.most_common(1)[0]
        if n * 3 < len(matched[:_MAX_FOLDER_FILES]):
            # most of its files deleted: where the few that moved (by history, not by name) went together
            new_prefix, n = renamed.most_common(1)[0] if renamed else (None, 0)
            if n < 2 or n * 2 <= sum(renamed.values()):
                return None, None
        tail = "/".join(segs[len(lit):])
        return (f"{new_prefix}/{tail}" if new_prefix else tail), commits[new_prefix].most_common(1)[0][0]

    # -- symbols -----------------------------------------------------------------------------

    def check_symbols(self, evs: Sequence[Any]) -> dict[Any, Any]:
        from memtui.sources.symbol_index import RepoSymbolIndex

        names = {}
        for ev in evs:
            names[ev.evidence_id] = _symbol_name(ev)
        wanted = sorted({n for n in names.values() if n})
        try:
            defs = RepoSymbolIndex(self.repo, self.head).definitions(wanted) if wanted else {}
        except GitError as exc:
            return {ev.evidence_id: self.result(ev, "unverifiable", "symbol_index_failed",
                                                f"{written(ev)}: symbols at HEAD could not be read ({exc})", "medium")
                    for ev in evs}
        out = {}
        for ev in evs:
            name, w = names[ev.evidence_id], written(ev)
            if not name:
                out[ev.evidence_id] = self.result(ev, "unchecked", "not_checkable", f"{w} names no symbol", "none")
                continue
            found = defs.get(name) or []
            anchor_path = safe_repo_path(ev.path) if ev.path else None
            if anchor_path and language_for(anchor_path) is None and ev.commit_sha:
                out[ev.evidence_id] = self.check_path(ev, "path")  # a language without a parser: the file
                continue
            if ev.path and anchor_path is None:
                out[ev.evidence_id] = self.result(ev, "unverifiable", "bad_path",
                                                  f"{w}: evidence path {ev.path!r} cannot name a file inside the repository",
                                                  "medium")
                continue
            if found:
                here = anchor_path
                if anchor_path and ev.commit_sha:
                    trail = self.history.follow(ev.commit_sha, anchor_path)
                    here = trail.path or anchor_path
                same = [d for d in found if d.path in (anchor_path, here)]
                d = (same or found)[0]
                if not anchor_path or d.path == anchor_path:
                    out[ev.evidence_id] = self.result(
                        ev, "valid", "exists", f"Symbol {w} is defined in {d.path}:{d.start_line}", "none",
                        d.path, (d.start_line, d.end_line))
                else:
                    out[ev.evidence_id] = self.result(
                        ev, "valid", "symbol_relocated", f"Symbol {w} is now at {d.path}:{d.start_line}", "none",
                        d.path, (d.start_line, d.end_line))
                continue
            was = (getattr(ev, "excerpt", None) or "")
            if not anchor_path and ev.commit_sha and was.startswith("defined in "):
                # defined in several files when the line was written (so no path was kept), in none now
                paths = [p for p in was.split(": ", 1)[-1].split(", ") if p != "..."]
                commit = self.history.last_change_of(ev.commit_sha, paths, name.rsplit(".", 1)[-1]) if paths else None
                where = f" in {_short(commit)}" if commit else f" since {_short(ev.commit_sha)}"
                out[ev.evidence_id] = self.result(
                    ev, "deleted", "referenced_symbol_deleted",
                    f"Referenced symbol {w} is defined nowhere at HEAD (was {was}; removed{where})", "high",
                    moved_in=commit)
                continue
            if not anchor_path:
                out[ev.evidence_id] = self.result(ev, "unresolvable", "reference_unresolvable",
                                                  f"Symbol {w} was defined nowhere at {_short(ev.commit_sha)} "
                                                  "(never existed, not stale)", "low")
                continue
            renamed = self._renamed(ev.commit_sha, anchor_path, name, _symbol_name_of(w)) if ev.commit_sha else None
            if renamed is not None:
                new_name, d, commit = renamed
                new_w = _written_like(w, new_name)
                where = f" in {_short(commit)}" if commit else ""
                out[ev.evidence_id] = self.result(
                    ev, "changed", "symbol_renamed",
                    f"Symbol {w} was renamed to {new_w} ({d.path}:{d.start_line}){where}", "medium",
                    d.path, (d.start_line, d.end_line), moved_in=commit, renamed_to=new_w)
                continue
            commit = self._symbol_removed_in(ev.commit_sha, anchor_path, name) if ev.commit_sha else None
            where = f" in {_short(commit)}" if commit else (f" since {_short(ev.commit_sha)}" if ev.commit_sha else "")
            out[ev.evidence_id] = self.result(ev, "deleted", "referenced_symbol_deleted",
                                              f"Referenced symbol {w} is defined nowhere at HEAD "
                                              f"(was in {anchor_path}; removed{where})", "high", moved_in=commit)
        return out

    def _renamed(self, anchor: str, path: str, name: str, written_name: str | None = None):
        """(new qualified name, its definition at HEAD, commit) when the symbol ``name`` defined in
        ``path`` at ``anchor`` was renamed: the file it was in (followed through renames, else the one
        file of that name new at HEAD) defines, where it stood, a symbol with the same last name part
        (``Account::Entry`` -> ``Entry`` when a namespace was flattened) or a similar name at the same
        depth and position among its siblings (``ClaudeClient`` -> ``ClaudeProvider``); None otherwise."""
        from difflib import SequenceMatcher

        from memtui.sources.symbol_index import Definition
        from memtui.sources.symbols import SymbolIndex

        trail = self.history.follow(anchor, path)
        here, commit = (trail.path, trail.last_commit) if trail.path and trail.path != path else (None, None)
        if here is None or not self.head_tree.exists(here):
            at = self.history.tree(anchor)
            here = path if self.head_tree.exists(path) else (self._same_name(path, at) if at is not None else None)
            commit = None
        if here is None or language_for(here) is None:
            return None
        blobs = self.repo.read_blobs([(anchor, path), (self.head, here)])
        old, new = blobs.get((anchor, path)), blobs.get((self.head, here))
        if old is None or new is None or old.binary or new.binary:
            return None
        index = SymbolIndex(maxsize=8)
        before = index.symbols(old.text, path, key=old.oid)
        span = index.find_symbol(old.text, path, name, key=old.oid)
        if span is None:
            return None
        old_q = span.name.split(".")
        after = index.symbols(new.text, here, key=new.oid)
        names_after = {s.name for s in after}
        moved = self._package_renamed(index, old, path, new, here, written_name or name, span.name, after)
        if moved is not None:
            return moved[0], moved[1], commit or self.history.last_change_of(anchor, [path, here], moved[2])
        same = [s for s in after if s.name.split(".")[-1] == old_q[-1] and s.name != span.name]
        pick = min(same, key=lambda s: (s.name.count("."), s.start_line)) if same else None
        if pick is None:
            siblings = [s.name for s in before if len(s.name.split(".")) == len(old_q) and s.name.split(".")[:-1] == old_q[:-1]]
            now = [s for s in after if len(s.name.split(".")) == len(old_q) and s.name.split(".")[:-1] == old_q[:-1]]
            k = siblings.index(span.name) if span.name in siblings else -1
            if 0 <= k < len(now) and now[k].name not in siblings:
                ratio = SequenceMatcher(None, old_q[-1].casefold(), now[k].name.split(".")[-1].casefold()).ratio()
                if ratio >= 0.5:
                    pick = now[k]
        if pick is None or pick.name == span.name or span.name in names_after:
            return None
        if commit is None:
            commit = self.history.last_change_of(anchor, [path] + ([here] if here != path else []), old_q[-1])
        return pick.name, Definition(pick.name, here, pick.start_line, pick.end_line), commit

    @staticmethod
    def _package_renamed(index, old, path: str, new, here: str, name: str, qualified: str, after):
        """(new name, its definition at HEAD, the old package's last part) when ``name`` carried its file's
        package (``com.acme.orders.OrderService.place``, or a trailing part of it), the symbol is still
        defined where its file went, and that file's package was renamed (``com.acme.ordering``)."""
        from memtui.sources.symbol_index import Definition

        parts, q = name.split("."), qualified.split(".")
        prefix = parts[:-len(q)] if len(parts) > len(q) and parts[-len(q):] == q else []
        was = index.package_of(old.text, path, key=old.oid).split(".")
        now = index.package_of(new.text, here, key=new.oid).split(".")
        if not prefix or was == now or was[-len(prefix):] != prefix:
            return None
        hit = next((s for s in after if s.name == qualified), None)
        if hit is None:
            return None
        # the whole old package written: the whole new one; a trailing part: as many parts of the new one
        lead = now if len(prefix) >= len(was) else now[max(0, len(now) - len(prefix)):]
        return (".".join(lead + q), Definition(hit.name, here, hit.start_line, hit.end_line), prefix[-1])

    def _symbol_removed_in(self, anchor: str, path: str, name: str) -> str | None:
        trail = self.history.follow(anchor, path)
        if trail.path is None and trail.steps:
            return trail.last_commit
        paths = [path] + ([trail.path] if trail.path and trail.path != path else [])
        return self.history.last_change_of(anchor, paths, name.rsplit(".", 1)[-1])


def _written_like(written_as: str, new_name: str) -> str:
    """``new_name`` (dotted) written as the line wrote the old name: as many trailing parts as it had
    at most, its separator (``::``, ``.``) and a trailing ``()``."""
    w = written_as.strip().strip("`")
    call = "()" if w.endswith(")") else ""
    base = re.sub(r"\(.*\)$", "", w)
    sep = "::" if "::" in base else "#" if "#" in base else "."
    n = len(re.split(r"::|\.|#", base))
    return sep.join(new_name.split(".")[-n:]) + call


def _symbol_name(ev: Any) -> str | None:
    return _symbol_name_of(ev.symbol or ev.target or "")


def _symbol_name_of(text: str) -> str | None:
    """``text`` as a dotted name (``a::B#c()`` -> ``a.B.c``), or None when it is not one."""
    name = re.sub(r"\(.*\)$", "", text.strip().strip("`")).replace("::", ".").replace("#", ".")
    return name if re.fullmatch(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*", name or "") else None


def check_references(evs: Sequence[Any], repo: GitRepo, head: str, history: History,
                     make_result: Callable) -> dict[Any, Any]:
    """Check named-reference evidence rows ``evs`` (see the module doc) against ``head``.

    ``make_result(ev, status, code, reason, severity, path=None, span=None, moved_in=None)``
    builds one check. Returns ``{evidence_id: check}``. Never raises for a bad row: a failure
    checking one row makes that row ``unverifiable`` and the others are still checked."""
    checker = _Checker(repo, head, history, make_result)
    history.prepare(e.commit_sha for e in evs if e.commit_sha)
    out: dict[Any, Any] = {}
    symbols = []
    for ev in evs:
        if is_example(ev):
            out[ev.evidence_id] = make_result(ev, "unchecked", "example",
                                              f"{written(ev)} is an example, not a reference", "none")
            continue
        outside = not_in_repository(written(ev)) or not_in_repository(ev.path or "")
        sure = not_in_repository(written(ev), existed=True)  # whatever the repository holds
        if not ev.commit_sha or (outside and sure and (ev.type != "symbol" or sure == "a credential")):
            why = f"is {outside}, outside the repository (not checked)" if outside else "has no commit to check from"
            out[ev.evidence_id] = make_result(ev, "unchecked", "not_checkable", f"{written(ev)} {why}", "none")
            continue
        if ev.type == "symbol":
            symbols.append(ev)
            continue
        try:
            out[ev.evidence_id] = checker.check_path(ev, "glob" if ev.type == "glob" else "path")
        except Exception as exc:  # one bad row never stops the run (issue 8, item 6)
            out[ev.evidence_id] = make_result(ev, "unverifiable", "check_failed",
                                              f"{written(ev)} could not be checked: {exc}", "medium")
    if symbols:
        try:
            out.update(checker.check_symbols(symbols))
        except Exception as exc:
            for ev in symbols:
                out[ev.evidence_id] = make_result(ev, "unverifiable", "check_failed",
                                                  f"{written(ev)} could not be checked: {exc}", "medium")
    return out


def rewrite_reference(written_as: str, resolved: str | None, new_path: str) -> str:
    """How the line should write a moved reference: ``new_path``, kept relative to the same base
    as before (``routes/main.py`` resolved as ``api/routes/main.py`` and moved to
    ``api/v2/routes/main.py`` becomes ``v2/routes/main.py``); a trailing ``/`` is kept."""
    bare = written_as.rstrip("/")
    out = new_path
    if resolved and resolved.rstrip("/").endswith(bare):
        base = resolved.rstrip("/")[:len(resolved.rstrip("/")) - len(bare)]
        if base and new_path.startswith(base):
            out = new_path[len(base):]
    return out + "/" if written_as.endswith("/") and not out.endswith("/") else out


def propose_statement(statement: str, moves: Sequence[tuple[str, str | None, str]]) -> str | None:
    """``statement`` with each moved reference ``(written, resolved, new_path)`` rewritten, or
    None when none of them appears in it literally."""
    out = statement
    for w, resolved, new in sorted(moves, key=lambda m: -len(m[0])):
        if w and w in out:
            out = out.replace(w, rewrite_reference(w, resolved, new))
    return out if out != statement else None
