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
    paths = sorted({e["path"] for r in records for e in r.get("evidence", []) if isinstance(e, dict) and e.get("path")})
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
