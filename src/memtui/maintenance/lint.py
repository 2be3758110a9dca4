"""``memtui lint``: the revalidation engine on memory files, without a store, for CI (issue 8, item 8).

Each file is read as the importer reads it (:func:`memtui.importers.markdown.parse_markdown`),
so a line's references are the ones an import would record. A reference is checked from the
commit that last changed its line (``git blame``; a line not committed yet is checked from
HEAD): it names something that existed then, and the question is whether it still does at
HEAD (:mod:`memtui.revalidation.references`). References are resolved at HEAD first; only those
not found there are resolved again at their line's commit (one more parse per such commit).

A finding is ``stale`` (moved or deleted since the line was written), ``unresolvable`` (named
something that did not exist when the line was written either) or ``unverifiable`` (could not
be checked: a bad path, a commit the clone lacks).
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from pathlib import Path

from memtui.revalidation.references import rewrite_reference
from memtui.revalidation.engine import EvidenceRef, revalidate
from memtui.sources.gitdiff import GitError, GitRepo
from memtui.sources.history import blame_commits

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
    from memtui.importers.formats import ImportContext
    from memtui.importers.markdown import parse_markdown

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


def lint_files(files: list[Path], repo_dir: Path) -> list[Finding]:
    """Findings for the memory ``files`` (working-tree files inside the checkout ``repo_dir``),
    sorted by file, line, column. Raises :class:`LintError`."""
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
    texts = {str(p): p.read_text(encoding="utf-8", errors="replace").splitlines() for p in paths}
    found = _mentions(_parse(paths, top, head), top)
    blame = {str(p): blame_commits(repo, p.relative_to(top).as_posix()) for p in paths}
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
        again = _mentions(_parse(paths, top, commit), top)
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
