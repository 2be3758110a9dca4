"""References of an imported memory file resolved with history, as ``memtui lint`` resolves them (issue 23, item 1).

A Markdown import resolves a line's references at HEAD (:mod:`memtui.importers.refs`). A reference that names
nothing at HEAD may have named something when its line was written (moved, renamed or deleted since): such a
reference is anchored at the commit that last changed its line (``git blame``), resolved as the line was then
(one more parse per such commit, at most :data:`MAX_ANCHOR_PARSES`, as :mod:`memtui.maintenance.lint` does),
so revalidation checks it from there and reports the move with its commit and new path. A reference that did
not exist at that commit either keeps its HEAD anchor: maintenance re-tries it at every run
(:mod:`memtui.maintenance.revalidation_job`). The import then revalidates the memories holding re-anchored
references at once (:func:`memtui.importers.pipeline.import_paths`), so they arrive in review.
"""

from __future__ import annotations

from pathlib import Path

from memtui.importers.records import ImportContext, Item, Parsed

__all__ = ["anchor_in_history", "MAX_ANCHOR_PARSES"]

#: At most this many extra parses (one per commit the re-anchored lines were written at, most lines first).
MAX_ANCHOR_PARSES = 16


def _written(ev: dict) -> str:
    return ev.get("target") or ev.get("symbol") or ev.get("path") or ""


def _mentions(parsed: Parsed) -> dict[tuple[str, int, str], tuple[dict, int]]:
    """(file resolved, item's first line, written) -> (the mention's evidence dict, the item's last line)."""
    out: dict[tuple[str, int, str], tuple[dict, int]] = {}
    for it in parsed.items:
        span = it.evidence[0] if it.evidence else {}
        first = span.get("line_start") or it.line or 0
        last = max(first, span.get("line_end") or first)
        for ev in it.evidence[1:]:
            if ev.get("ref") == "mention":
                out.setdefault((str(Path(it.path).resolve()), first, _written(ev)), (ev, last))
    return out


def anchor_in_history(parsed: Parsed, files: list[Path], ctx: ImportContext) -> list[Item]:
    """Re-anchor, in place, the mentions of ``parsed`` (Markdown ``files`` parsed at ``ctx.head``) that name
    nothing at HEAD but were written at an older commit; returns the items whose evidence was re-anchored.
    Does nothing without a checkout with a commit. A git failure leaves the evidence as it was."""
    if ctx.repo_root is None or not ctx.head:
        return []
    from memtui.importers.markdown import parse_markdown
    from memtui.revalidation.engine import EvidenceRef, revalidate
    from memtui.sources.gitdiff import GitError, GitRepo
    from memtui.sources.history import blame_commits

    found = _mentions(parsed)
    keys = [k for k, (ev, _) in found.items() if ev.get("commit_sha") == ctx.head]
    if not keys:
        return []
    repo = GitRepo(ctx.repo_root)
    refs = [EvidenceRef(n, "m", "file_span" if not ev.get("type") else ev["type"], ev.get("path"), ev.get("commit_sha"),
                        ev.get("line_start"), ev.get("line_end"), ev.get("symbol"), ev.get("target"), None,
                        ev.get("ref"), ev.get("excerpt"))
            for n, ev in enumerate(found[k][0] for k in keys)]
    try:
        checks = revalidate(refs, None, repo).checks
    except GitError:
        return []
    unresolved = [keys[c.evidence_id] for c in checks if c.status == "unresolvable"]
    if not unresolved:
        return []
    blames: dict[str, dict[int, str]] = {}
    texts: dict[str, list[str]] = {}
    by_commit: dict[str, list[tuple[str, int, str]]] = {}
    for key in unresolved:
        f, first, written = key
        if f not in blames:
            try:
                rel = Path(f).relative_to(ctx.repo_root.resolve()).as_posix()
            except ValueError:
                blames[f] = {}
                continue
            blames[f] = blame_commits(repo, rel)
            texts[f] = Path(f).read_text(encoding="utf-8", errors="replace").splitlines()
        line = _line_of(texts.get(f, []), first, found[key][1], written)
        anchor = blames[f].get(line)
        if anchor and anchor != ctx.head:
            by_commit.setdefault(anchor, []).append(key)
    owner = {id(ev): it for it in parsed.items for ev in it.evidence}
    moved: list[Item] = []
    for commit, group in sorted(by_commit.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:MAX_ANCHOR_PARSES]:
        then = _mentions(parse_markdown(files, ImportContext(ctx.repo_root, commit, ctx.repository_id,
                                                             ctx.tenant_id)))
        for key in group:
            old = then.get(key, ({}, 0))[0]
            if old.get("commit_sha") != commit:
                continue  # an example, or not held then: nothing to check it from
            ev = found[key][0]
            ev.clear()
            ev.update(old)
            moved.append(owner[id(ev)])
    return moved


def _line_of(lines: list[str], first: int, last: int, written: str) -> int:
    """The 1-based line of the item's lines ``first``..``last`` that holds ``written`` (or its last path
    component); else ``first``."""
    tail = written.rstrip("/").rsplit("/", 1)[-1]
    for needle in dict.fromkeys(n for n in (written, tail) if n):
        for n in range(max(1, first), min(len(lines), last) + 1):
            if needle in lines[n - 1]:
                return n
    return first
