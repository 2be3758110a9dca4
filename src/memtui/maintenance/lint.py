"""``memtui lint``: the revalidation engine on memory files, without a store, for CI (issue 8, item 8).

Each file is read as the importer reads it (:func:`memtui.importers.markdown.parse_markdown`),
so a line's references are the ones an import would record. A reference is checked from the
commit that last changed its line (``git blame``; a line not committed yet is checked from
HEAD): it names something that existed then, and the question is whether it still does at
HEAD (:mod:`memtui.revalidation.references`). References are resolved at HEAD, and those of lines
written at an older commit are resolved again as they were at that commit (one more parse per
such commit, at most :data:`MAX_ANCHOR_PARSES`).

A finding is ``stale`` (moved or deleted since the line was written), ``unresolvable`` (named
something that did not exist when the line was written either) or ``unverifiable`` (could not
be checked: a bad path, a commit the clone lacks).

Kept between runs (:mod:`memtui.sources.diskcache`, under the repository's git dir; off with
``MEMTUI_CACHE=0``): the findings, keyed by HEAD and the contents of the files read; each parse,
keyed by its commit and those contents (so a new commit that leaves the files alone parses only
HEAD again); symbol definitions per commit and name, and per file version
(:mod:`memtui.sources.symbol_store`: a new commit parses only the source files that changed).
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from memtui.sources.gitdiff import GitError, GitRepo

__all__ = ["Finding", "LintError", "lint_files", "suggest_diff", "format_findings"]

_KINDS = {"deleted": "stale", "changed": "stale", "unresolvable": "unresolvable", "unverifiable": "unverifiable"}


class LintError(Exception):
    """Lint cannot run (not a git checkout, a file outside it, unreadable); the message names it."""


@dataclass
class Finding:
    """One reference worth reporting. ``line``/``column``: 1-based; ``kind``: stale |
    unresolvable | unverifiable; ``code``: the reason code (path_moved, symbol_renamed, file_deleted, ...);
    ``new_path``: where a moved reference is now (repository-relative), or a renamed symbol's new name."""

    file: str
    line: int
    column: int
    kind: str
    code: str
    reference: str
    message: str
    new_path: str | None = None
    resolved: str | None = None


def _parse(files: list[Path], root: Path, rev: str):
    from memtui.importers.markdown import parse_markdown
    from memtui.importers.records import ImportContext

    return parse_markdown(files, ImportContext(root, rev, root.name))


def _mentions(parsed, root: Path) -> dict[tuple[str, int, str], tuple[dict, tuple[int, int]]]:
    """(file, first line, written) -> (evidence dict, the item's line span)."""
    out = {}
    for it in parsed.items:
        span = it.evidence[0] if it.evidence else {}
        lines = (span.get("line_start") or it.line or 0, span.get("line_end") or it.line or 0)
        for ev in it.evidence[1:]:
            if ev.get("ref") not in ("mention", "example"):
                continue
            written = ev.get("target") or ev.get("symbol") or ev.get("path") or ""
            out.setdefault((str(Path(it.path).resolve()), lines[0], written), (ev, lines))
    return out


#: At most this many extra parses (one per distinct commit the lines were written at, most
#: referenced commits first); references of other commits keep their resolution at HEAD.
MAX_ANCHOR_PARSES = 16

#: warnings of a parse that depends on a file it could not read (created later, it would be read)
_UNREAD = ("names no file", "cannot be read", "leaves ", "no instruction files")


class _Parses:
    """The memory files' mentions as resolved at a commit (:func:`_parse`, :func:`_mentions`), kept in
    ``cache`` by (commit, the contents of the files given); an entry is used only while every file the
    parse read (the files given and those their ``@imports`` follow) has the content it had then."""

    def __init__(self, paths: list[Path], top: Path, cache) -> None:
        self.paths, self.top, self.cache = paths, top, cache
        self.read: set[str] = {str(p) for p in paths}  # every file a parse read
        self._digests: dict[str, str | None] = {}
        self.parses = 0

    def digest(self, f: str) -> str | None:
        if f not in self._digests:
            from memtui.sources.diskcache import file_digest

            self._digests[f] = file_digest(f)
        return self._digests[f]

    def key(self, rev: str) -> str:
        from memtui.sources.diskcache import code_fingerprint, key_of

        return key_of("lint-parse-v1", code_fingerprint(), rev, str(self.top),
                      [(str(p), self.digest(str(p))) for p in self.paths])

    def fresh(self, deps: dict) -> bool:
        return isinstance(deps, dict) and all(self.digest(f) == d for f, d in deps.items())

    def at(self, rev: str) -> dict[tuple[str, int, str], tuple[dict, tuple[int, int]]]:
        key = self.key(rev) if self.cache is not None else None
        got = self.cache.get("parse", key) if key else None
        if isinstance(got, dict) and self.fresh(got.get("deps")):
            self.read |= set(got["deps"])
            return {(f, n, w): (ev, (a, b)) for f, n, w, ev, (a, b) in got["mentions"]}
        self.parses += 1
        parsed = _parse(self.paths, self.top, rev)
        found = _mentions(parsed, self.top)
        self.read |= set(parsed.files)
        keep = not any(m in w for w in parsed.warnings for m in _UNREAD) and \
            not any(Path(f).name == "MEMORY.md" for f in parsed.files)  # an index's links: files that may appear
        if key and keep:
            self.cache.put("parse", key, {
                "deps": {f: self.digest(f) for f in sorted(parsed.files)},
                "mentions": [[f, n, w, ev, list(lines)] for (f, n, w), (ev, lines) in found.items()]})
        return found


def lint_files(files: list[Path], repo_dir: Path, *, cache: bool = True, stats: dict | None = None) -> list[Finding]:
    """Findings for the memory ``files`` (working-tree files inside the checkout ``repo_dir``),
    sorted by file, line, column. ``cache``: read and keep answers between runs (see the module
    doc). ``stats``, when given, gets ``cached`` (whether a cache was there to use), ``from_cache``
    (the findings were kept ones), ``parses`` (files parsed, not read back) and ``symbol_lookups``
    (names looked up in git, not read back). Raises :class:`LintError`."""
    stats = {} if stats is None else stats
    repo_dir = Path(repo_dir).resolve()
    try:
        head = GitRepo(repo_dir).head()
    except GitError as exc:
        raise LintError(f"{repo_dir}: not a git checkout with a commit ({exc})") from exc
    top = _toplevel(repo_dir)
    repo = GitRepo(top)  # every path below is relative to the root, wherever lint was started
    paths = []
    for f in files:
        p = Path(f).resolve()
        if not p.is_file():
            raise LintError(f"{f}: no such file")
        try:
            p.relative_to(top)
        except ValueError as exc:
            raise LintError(f"{f}: not inside the checkout {top}") from exc
        paths.append(p)
    store = None
    if cache:
        from memtui.sources.diskcache import for_checkout

        store = for_checkout(repo)
    parses = _Parses(paths, top, store)
    stats.update(cached=store is not None, from_cache=False, parses=0, symbol_lookups=0)
    result_key = None
    if store is not None:
        from memtui.sources.diskcache import code_fingerprint, key_of

        result_key = key_of("lint-findings-v1", code_fingerprint(), head, str(top),
                            [(str(p), parses.digest(str(p))) for p in paths])
        got = store.get("findings", result_key)
        if isinstance(got, dict) and parses.fresh(got.get("deps")) and isinstance(got.get("findings"), list):
            names = {f.name for f in fields(Finding)}
            stats["from_cache"] = True
            return [Finding(**{k: v for k, v in f.items() if k in names}) for f in got["findings"]]
    from memtui.sources.symbol_store import SymbolStore, using

    with using(SymbolStore(store)) as symbols:
        findings = _lint(paths, top, repo, head, parses)
    stats.update(parses=parses.parses, symbol_lookups=symbols.misses)
    if result_key is not None:
        store.put("findings", result_key, {"deps": {f: parses.digest(f) for f in sorted(parses.read)},
                                           "findings": [asdict(f) for f in findings]})
    return findings


def _lint(paths: list[Path], top: Path, repo: GitRepo, head: str, parses: _Parses) -> list[Finding]:
    from memtui.revalidation.engine import EvidenceRef, revalidate
    from memtui.sources.history import blame_commits

    found = parses.at(head)
    files = sorted({key[0] for key in found} | {str(p) for p in paths})  # with the files @imports followed
    texts = {f: Path(f).read_text(encoding="utf-8", errors="replace").splitlines() for f in files}
    blame = {f: blame_commits(repo, Path(f).relative_to(top).as_posix()) for f in files}
    # each reference is checked from the commit that last changed ITS line, resolved as it was then
    where: dict[tuple[str, int, str], tuple[int, int]] = {}
    anchor_of: dict[tuple[str, int, str], str] = {}
    by_commit: dict[str, list[tuple[str, int, str]]] = {}
    for key, (ev, lines) in found.items():
        where[key] = _locate(texts[key[0]], lines, key[2])
        anchor_of[key] = blame[key[0]].get(where[key][0]) or head
        if anchor_of[key] != head:
            by_commit.setdefault(anchor_of[key], []).append(key)
    ranked = sorted(by_commit.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    for commit, keys in ranked[:MAX_ANCHOR_PARSES]:
        again = parses.at(commit)
        for key in keys:
            if key in again:
                found[key] = again[key]
    for commit, keys in ranked[MAX_ANCHOR_PARSES:]:
        for key in keys:  # not re-resolved: checked from HEAD as resolved there
            anchor_of[key] = head
    refs, meta = [], {}
    for n, (key, (ev, lines)) in enumerate(sorted(found.items())):
        anchor = anchor_of.get(key, head) if ev.get("commit_sha") else None
        refs.append(EvidenceRef(n, f"{key[0]}:{key[1]}", ev.get("type", "file_span"), ev.get("path"), anchor,
                                ev.get("line_start"), ev.get("line_end"), ev.get("symbol"), ev.get("target"), None,
                                ev.get("ref"), ev.get("excerpt")))
        meta[n] = (key, ev)
    result = revalidate(refs, None, repo)
    findings: list[Finding] = []
    seen: set[tuple] = set()
    for check in result.checks:
        kind = _KINDS.get(check.status)
        if kind is None:
            continue
        key, ev = meta[check.evidence_id]
        file, _first, written = key
        line, col = where[key]
        rel = Path(file).relative_to(top).as_posix()
        if (rel, line, col, written, kind) in seen:
            continue
        seen.add((rel, line, col, written, kind))
        new = check.current_path if check.reason_code == "path_moved" else (
            check.renamed_to if check.reason_code == "symbol_renamed" else None)
        findings.append(Finding(rel, line, col, kind, check.reason_code, written, check.reason, new,
                                ev.get("path")))
    findings.sort(key=lambda f: (f.file, f.line, f.column, f.reference))
    return findings


def _locate(lines: list[str], span: tuple[int, int], written: str) -> tuple[int, int]:
    """(line, column), 1-based, of ``written`` inside the item's own lines ``span``; failing that,
    of its last path component (a tree entry is written as its name); else the span's first
    non-blank column."""
    first, last = max(1, span[0]), max(span[0], span[1])
    tail = written.rstrip("/").rsplit("/", 1)[-1]
    for needle in dict.fromkeys(n for n in (written, written.rstrip("/"), tail) if n):
        for n in range(first, min(len(lines), last) + 1):
            col = lines[n - 1].find(needle)
            if col >= 0:
                return n, col + 1
    text = lines[first - 1] if 0 < first <= len(lines) else ""
    return first, len(text) - len(text.lstrip()) + 1


def _toplevel(repo_dir: Path) -> Path:
    top = GitRepo(repo_dir).toplevel()
    if top is None:
        raise LintError(f"{repo_dir}: not a git checkout")
    return top


def suggest_diff(findings: list[Finding], repo_dir: Path) -> str:
    """A unified diff (``a/FILE`` / ``b/FILE``, paths relative to the checkout's root) rewriting
    every moved reference and renamed symbol in place."""
    from memtui.revalidation.references import rewrite_reference

    root = _toplevel(Path(repo_dir).resolve())
    out: list[str] = []
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if f.code in ("path_moved", "symbol_renamed") and f.new_path:
            by_file.setdefault(f.file, []).append(f)
    for rel, items in sorted(by_file.items()):
        path = Path(root) / rel
        old = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        new = list(old)
        for f in sorted(items, key=lambda f: (f.line, -f.column)):
            text = new[f.line - 1]
            i = f.column - 1
            if text[i:i + len(f.reference)] == f.reference:
                new[f.line - 1] = text[:i] + rewrite_reference(f.reference, f.resolved, f.new_path) + text[i + len(f.reference):]
        out += difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}")
    return "".join(out)


def format_findings(findings: list[Finding], fmt: str) -> str:
    """``text``: ``FILE:LINE:COL: KIND: MESSAGE`` lines; ``github``: workflow annotations
    (``::error`` for stale, ``::notice`` otherwise); ``json``: an object with the findings."""
    import json

    if fmt == "json":
        return json.dumps({"findings": [asdict(f) for f in findings],
                           "stale": sum(1 for f in findings if f.kind == "stale")}, indent=2)
    lines = []
    for f in findings:
        if fmt == "github":
            level = "error" if f.kind == "stale" else ("warning" if f.kind == "unverifiable" else "notice")
            msg = f"{f.kind}: {f.message}".replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            lines.append(f"::{level} file={f.file},line={f.line},col={f.column}::{msg}")
        else:
            lines.append(f"{f.file}:{f.line}:{f.column}: {f.kind}: {f.message}")
    return "\n".join(lines)
