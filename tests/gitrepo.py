"""Real git repositories for tests: a fixed identity and clock, no user or system config."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
           "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd``; its standard output (raises on failure)."""
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout


def checkout_for(records: list[dict], root: Path, lines: int = 60) -> str:
    """A git checkout at ``root`` holding every file the records' evidence names (``lines`` numbered
    lines each), committed once; each piece of evidence with a path is anchored at that commit (its
    ``commitSha`` set in place), so an imported active record meets the evidence invariant against the
    checkout (issue 21 item 3: import with ``repo_dir=root`` / ``--repo root``). Returns the commit."""
    paths = sorted({e["path"] for r in records for e in r.get("evidence", []) if isinstance(e, dict) and e.get("path")
                    and not e["path"].startswith("/") and ".." not in e["path"].split("/")})
    root.mkdir(parents=True, exist_ok=True)
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    for p in paths:
        f = root / p
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("".join(f"line {i} of {p}\n" for i in range(1, lines + 1)), encoding="utf-8")
    (root / ".keep").write_text("", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", "the files the memories name")
    head = git(root, "rev-parse", "HEAD").strip()
    for r in records:
        for e in r.get("evidence", []):
            if isinstance(e, dict) and e.get("path"):
                e["commitSha"] = head
    return head


def _records_in(doc) -> list[dict]:
    """Every record (a mapping with an ``evidence`` list) inside a loaded memory file."""
    if isinstance(doc, dict):
        if isinstance(doc.get("evidence"), list):
            return [doc]
        return [r for v in doc.values() for r in _records_in(v)]
    if isinstance(doc, list):
        return [r for v in doc for r in _records_in(v)]
    return []


def anchor_files(paths, tmp_path: Path) -> tuple[list[Path], Path, str, list[dict]]:
    """Memory files whose evidence names made-up commits, anchored in a real checkout: the files the
    evidence names are committed in ``tmp_path/checkout`` (:func:`checkout_for`) and copies of the
    memory files (``tmp_path/anchored``) name its commit instead of theirs. Returns (the copies, the
    checkout, its commit, the records as the files give them)."""
    import json

    import yaml

    loaded = []
    for p in map(Path, paths):
        text = p.read_text(encoding="utf-8")
        if p.suffix == ".jsonl":
            doc = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            doc = yaml.safe_load(text)
        loaded.append((p, text, _records_in(doc)))
    records = [r for _, _, rs in loaded for r in rs]
    commits = {e["commitSha"] for r in records for e in r["evidence"] if isinstance(e, dict) and e.get("commitSha")}
    root = tmp_path / "checkout"
    head = checkout_for(records, root)
    out = tmp_path / "anchored"
    out.mkdir(exist_ok=True)
    copies = []
    for p, text, _ in loaded:
        for c in sorted(commits, key=len, reverse=True):
            text = text.replace(c, head)
        copy = out / p.name
        copy.write_text(text, encoding="utf-8")
        copies.append(copy)
    return copies, root, head, records


def set_statuses(engine, records: list[dict]) -> None:
    """Set the evidence statuses ``records`` give (other than unchecked) in the store, as maintenance
    would have found them (import re-establishes them, issue 21 item 3)."""
    import sqlalchemy as sa

    from memtui.store.models import Evidence

    table = Evidence.__table__
    with engine.begin() as conn:
        for r in records:
            mid = r.get("memoryId") or r.get("candidateId") or r.get("candidate_id")
            for i, e in enumerate(r["evidence"]):
                if isinstance(e, dict) and e.get("status", "unchecked") != "unchecked":
                    conn.execute(sa.update(table).where(table.c.memory_id == mid, table.c.ordinal == i)
                                 .values(status=e["status"]))


def import_anchored(engine, paths, actor, tmp_path: Path, **kw):
    """:func:`memtui.importers.native.import_files` of memory files whose evidence names made-up
    commits, as a store that was reviewed and revalidated: the files are anchored in a checkout
    (:func:`anchor_files`), the import checks against it (issue 21 item 3: an active record arrives
    active only when its evidence resolves), then the evidence statuses the files give are set
    (:func:`set_statuses`). Returns (the import report, the checkout's commit)."""
    from memtui.importers.native import import_files

    copies, root, head, records = anchor_files(paths, tmp_path)
    report = import_files(engine, copies, actor, repo_dir=root, **kw)
    set_statuses(engine, records)
    return report, head
