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
    unresolvable | unverifiable; ``code``: the reason code (path_moved, file_deleted, ...);
    ``new_path``: where a moved reference is now (repository-relative)."""

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


def lint_files(files: list[Path], repo_dir: Path) -> list[Finding]:
    """Findings for the memory ``files`` (working-tree files inside the checkout ``repo_dir``),
    sorted by file, line, column. Raises :class:`LintError`."""
    repo_dir = Path(repo_dir).resolve()
    repo = GitRepo(repo_dir)
    try:
        head = repo.head()
    except GitError as exc:
        raise LintError(f"{repo_dir}: not a git checkout with a commit ({exc})") from exc
    top = _toplevel(repo_dir)
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
    at_head = _mentions(_parse(paths, top, head), top)
    blame = {str(p): blame_commits(repo, p.relative_to(top).as_posix()) for p in paths}
    # references missing at HEAD: resolve again where their line was written
    missing_by_commit: dict[str, list[tuple[str, int, str]]] = {}
    anchor_of: dict[tuple[str, int, str], str] = {}
    for key, (ev, lines) in at_head.items():
        commits = [blame[key[0]].get(n) for n in range(lines[0], lines[1] + 1)]
        commits = [c for c in commits if c]
        anchor = commits[0] if commits and len(set(commits)) == 1 else (commits[-1] if commits else head)
        anchor_of[key] = anchor
        if anchor != head:
            missing_by_commit.setdefault(anchor, []).append(key)
    from memtui.sources.history import History

    head_tree = History(repo, head).tree(head)
    for key, (ev, _lines) in at_head.items():
        p = ev.get("path")
        if p and head_tree is not None and head_tree.exists(p.rstrip("/")) and ev.get("type") != "symbol":
            missing_by_commit.get(anchor_of[key], []).remove(key) if key in missing_by_commit.get(
                anchor_of[key], []) else None
    found = dict(at_head)
    for commit, keys in sorted(missing_by_commit.items()):
        again = _mentions(_parse(paths, top, commit), top)
        for key in keys:
            if key in again:
                found[key] = again[key]
    refs, meta = [], {}
    for n, (key, (ev, lines)) in enumerate(sorted(found.items())):
        anchor = anchor_of.get(key, head) if ev.get("commit_sha") else None
        refs.append(EvidenceRef(n, f"{key[0]}:{key[1]}", ev.get("type", "file_span"), ev.get("path"), anchor,
                                ev.get("line_start"), ev.get("line_end"), ev.get("symbol"), ev.get("target"), None,
                                ev.get("ref")))
        meta[n] = (key, ev)
    result = revalidate(refs, None, repo)
    findings: list[Finding] = []
    texts = {str(p): p.read_text(encoding="utf-8", errors="replace").splitlines() for p in paths}
    for check in result.checks:
        kind = _KINDS.get(check.status)
        if kind is None:
            continue
        (file, first, written), ev = meta[check.evidence_id]
        line, col = _locate(texts[file], first, written)
        rel = Path(file).relative_to(top).as_posix() if Path(file).is_relative_to(top) else file
        findings.append(Finding(rel, line, col, kind, check.reason_code, written, check.reason,
                                check.current_path if check.reason_code == "path_moved" else None, ev.get("path")))
    findings.sort(key=lambda f: (f.file, f.line, f.column, f.reference))
    return findings


def _locate(lines: list[str], first: int, written: str) -> tuple[int, int]:
    for n in range(max(1, first), min(len(lines), first + 200) + 1):
        col = lines[n - 1].find(written) if written else -1
        if col >= 0:
            return n, col + 1
    return first, 1


def _toplevel(repo_dir: Path) -> Path:
    try:
        return Path(GitRepo(repo_dir)._run(["rev-parse", "--show-toplevel"]).decode().strip())
    except GitError as exc:
        raise LintError(f"{repo_dir}: not a git checkout ({exc})") from exc


def suggest_diff(findings: list[Finding], repo_dir: Path) -> str:
    """A unified diff (``a/FILE`` / ``b/FILE``, paths relative to the checkout's root) rewriting
    every moved reference in place."""
    root = _toplevel(Path(repo_dir).resolve())
    out: list[str] = []
    by_file: dict[str, list[Finding]] = {}
    for f in findings:
        if f.code == "path_moved" and f.new_path:
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
