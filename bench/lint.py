"""``memtui lint`` on a 200-line memory file in a 2,000-commit repository (DESIGN.md "Scale targets": under 2 s).

    .venv/bin/python bench/lint.py [--commits 2000] [--files 500] [--lines 200] [--runs 5]

Uses the cached repository of ``bench/revalidate.py`` (built on first use). A clone gets an
AGENTS.md written at commit 100 — one line per file that exists there, naming it in a code span —
merged into main, so ``git blame`` dates every line at commit 100 and the 1,900 commits after it
rename and delete some of those files. Times ``memtui lint AGENTS.md`` as a whole process (the
user's wait), ``--runs`` times, beside a naive check of the same references (per reference: ``git
cat-file -e HEAD:PATH`` and, when gone, ``git log --follow`` to find where it went). Prints one JSON
object: ``lines``, ``findings``, ``stale``, ``seconds_median``, ``seconds_min``, ``naive_seconds``,
``speedup_vs_naive``, ``target_seconds``, ``meets_target``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
       "PYTHONPATH": str(ROOT / "src")}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--lines", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    import revalidate as rb  # bench/revalidate.py: the cached repository

    rb.CACHE.mkdir(parents=True, exist_ok=True)
    repo, _model, shas = rb.build_repo(args.commits, args.files, False)
    tmp = Path(tempfile.mkdtemp(prefix="memtui-lint-"))
    try:
        work = tmp / "work"
        git(tmp, "clone", "-q", "--shared", str(repo), str(work))
        anchor = shas[min(100, len(shas) - 1)]
        git(work, "checkout", "-q", "-b", "memory", anchor)
        files = sorted(git(work, "ls-tree", "-r", "--name-only", "HEAD").split())[:args.lines]
        (work / "AGENTS.md").write_text("".join(f"- `{f}` holds part of the order service.\n" for f in files))
        git(work, "add", "AGENTS.md")
        git(work, "commit", "-q", "-m", "memory file")
        git(work, "merge", "-q", "--no-edit", "-X", "theirs", "main")
        cmd = [sys.executable, "-m", "memtui", "lint", "AGENTS.md", "--format", "json"]
        times, out = [], None
        for _ in range(args.runs):
            t = time.perf_counter()
            proc = subprocess.run(cmd, cwd=work, env=ENV, capture_output=True, text=True)
            times.append(time.perf_counter() - t)
            out = proc
        report = json.loads(out.stdout or "{}")
        t = time.perf_counter()
        for f in files:  # naive: a process or two per reference
            gone = subprocess.run(["git", "cat-file", "-e", f"HEAD:{f}"], cwd=work, env=ENV,
                                  capture_output=True).returncode != 0
            if gone:
                subprocess.run(["git", "log", "--follow", "-M", "--format=%H", "--name-status", "-1",
                                f"{anchor}..HEAD", "--", f], cwd=work, env=ENV, capture_output=True)
        naive = time.perf_counter() - t
        median = statistics.median(times)
        print(json.dumps({
            "lines": len(files), "commits": args.commits, "findings": len(report.get("findings", [])),
            "stale": report.get("stale"), "seconds_median": round(median, 3), "seconds_min": round(min(times), 3),
            "naive_seconds": round(naive, 3), "speedup_vs_naive": round(naive / median, 2) if median else None,
            "target_seconds": 2.0, "meets_target": median < 2.0,
        }, indent=2))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
