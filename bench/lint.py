"""``memtui lint`` as a pre-commit hook (DESIGN.md "Scale targets": under 2 s), on a synthetic 2,000-commit
repository or on a real one.

    .venv/bin/python bench/lint.py [--commits 2000] [--files 500] [--lines 200] [--runs 5]
    .venv/bin/python bench/lint.py --repo DIR --file AGENTS.md [--runs 3]

Synthetic (default): the cached repository of ``bench/revalidate.py`` (built on first use); a clone
gets an AGENTS.md written at commit 100 — one line per file that exists there, naming it in a code span
— merged into main, so ``git blame`` dates every line at commit 100 and the 1,900 commits after it
rename and delete some of those files. Real (``--repo``): a clone of DIR (a checkout or a bare mirror,
as ``fetch`` leaves it) at its HEAD, linting FILE as it is there.

Each figure times ``memtui lint FILE --format json`` as a whole process (``MEMTUI_WARM=0``: no warm
command server) with its cache in a folder of the bench (``MEMTUI_CACHE_DIR``):

* ``cold``: an empty cache (one run: the first run on a clone; also the figure without a cache);
* ``warm``: the same HEAD and file again (median of ``--runs``);
* ``new_commit``: after a commit that leaves FILE alone (median of ``--runs``, a new commit each);
* ``edited``: after FILE is edited, not committed (a line added at its end; median of ``--runs``,
  another line each time).

``same_findings``: the warm runs found what the cold one did, and the last ``new_commit`` and ``edited``
runs what a run without any cache finds in the same state. ``cpu_seconds`` are the lint processes' user + system time (git children included);
``naive_seconds``: per reference (a code span naming a path), ``git cat-file -e HEAD:PATH`` and, when it
is gone, ``git log --follow`` to find where it went — a shell-script check that resolves nothing.
Prints one JSON object with ``load_avg_1m`` at the start and end. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
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
       "PYTHONPATH": str(ROOT / "src"), "MEMTUI_WARM": "0"}
TARGET = 2.0


def say(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=check, capture_output=True, text=True).stdout


def lint(work: Path, file: str, env: dict) -> tuple[float, float, dict]:
    """(wall seconds, CPU seconds, the JSON) of one whole ``memtui lint`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "memtui", "lint", file, "--format", "json"], cwd=work,
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1) or not proc.stdout.lstrip().startswith("{"):
        raise SystemExit(f"memtui lint failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(proc.stdout or "{}")


def commit_file(work: Path, rel: str, text: str, message: str) -> None:
    """Commit ``rel`` with ``text`` on top of HEAD without the checkout's index (a mirror that lacks a
    blob cannot write its index as a tree; ``write-tree --missing-ok`` can)."""
    (work / rel).write_text(text)
    blob = git(work, "hash-object", "-w", rel).strip()
    index = work / ".git" / "bench-index"
    env = {**ENV, "GIT_INDEX_FILE": str(index)}
    run = lambda *a: subprocess.run(["git", *a], cwd=work, env=env, check=True, capture_output=True,  # noqa: E731
                                    text=True).stdout.strip()
    run("read-tree", "HEAD")
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
    tree = run("write-tree", "--missing-ok")
    commit = run("commit-tree", tree, "-p", "HEAD", "-m", message)
    git(work, "update-ref", "HEAD", commit)
    index.unlink()


def figures(walls: list[float], cpus: list[float]) -> dict:
    return {"seconds_median": round(statistics.median(walls), 3), "seconds_min": round(min(walls), 3),
            "cpu_seconds_median": round(statistics.median(cpus), 3), "runs": len(walls),
            "meets_target": statistics.median(walls) < TARGET}


def scenarios(work: Path, file: str, runs: int, cache_dir: Path) -> dict:
    """The cold, warm, new_commit and edited figures (see the module doc) in the clone ``work``."""
    cached = {**ENV, "MEMTUI_CACHE_DIR": str(cache_dir)}
    uncached = {**ENV, "MEMTUI_CACHE": "0"}
    out: dict = {}
    same = True

    def check(report: dict, label: str) -> None:  # the last run of a figure, against no cache at all
        nonlocal same
        say(f"{label}: the same state without a cache")
        _, _, plain = lint(work, file, uncached)
        if plain.get("findings") != report.get("findings"):
            same = False
            say(f"{label}: findings differ from a run without a cache")

    shutil.rmtree(cache_dir, ignore_errors=True)
    say("cold run")
    wall, cpu, first = lint(work, file, cached)
    out["cold"] = figures([wall], [cpu])
    say(f"cold: {wall:.2f} s; warm runs")
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu, report = lint(work, file, cached)
        walls.append(wall)
        cpus.append(cpu)
        same &= report.get("findings") == first.get("findings")
    out["warm"] = figures(walls, cpus)
    walls, cpus = [], []
    for i in range(runs):
        commit_file(work, f"bench-touch-{i}.txt", f"commit {i}\n", f"bench: commit {i} leaving {file} alone")
        wall, cpu, report = lint(work, file, cached)
        walls.append(wall)
        cpus.append(cpu)
    check(report, "new_commit")
    out["new_commit"] = figures(walls, cpus)
    walls, cpus = [], []
    original = (work / file).read_bytes()
    try:
        for i in range(runs):
            with (work / file).open("a", encoding="utf-8") as fh:
                fh.write(f"\n- `README.md` says how to start (bench edit {i}).\n")
            wall, cpu, report = lint(work, file, cached)
            walls.append(wall)
            cpus.append(cpu)
        check(report, "edited")
    finally:
        (work / file).write_bytes(original)
    out["edited"] = figures(walls, cpus)
    out["same_findings"] = same
    out["findings"] = len(first.get("findings", []))
    out["stale"] = first.get("stale")
    return out


def naive(work: Path, refs: list[str], since: str | None) -> float:
    """Seconds of the naive check (see the module doc) of ``refs``."""
    t = time.perf_counter()
    for f in refs:  # a process or two per reference
        gone = subprocess.run(["git", "cat-file", "-e", f"HEAD:{f}"], cwd=work, env=ENV,
                              capture_output=True).returncode != 0
        if gone:
            rng = [f"{since}..HEAD"] if since else ["HEAD"]
            subprocess.run(["git", "log", "--follow", "-M", "--format=%H", "--name-status", "-1", *rng, "--", f],
                           cwd=work, env=ENV, capture_output=True)
    return time.perf_counter() - t


def synthetic(args, tmp: Path) -> dict:
    import revalidate as rb  # bench/revalidate.py: the cached repository

    rb.CACHE.mkdir(parents=True, exist_ok=True)
    repo, _model, shas = rb.build_repo(args.commits, args.files, False)
    work = tmp / "work"
    git(tmp, "clone", "-q", "--shared", str(repo), str(work))
    anchor = shas[min(100, len(shas) - 1)]
    git(work, "checkout", "-q", "-b", "memory", anchor)
    files = sorted(git(work, "ls-tree", "-r", "--name-only", "HEAD").split())[:args.lines]
    (work / "AGENTS.md").write_text("".join(f"- `{f}` holds part of the order service.\n" for f in files))
    git(work, "add", "AGENTS.md")
    git(work, "commit", "-q", "-m", "memory file")
    git(work, "merge", "-q", "--no-edit", "-X", "theirs", "main")
    result = {"case": "synthetic", "lines": len(files), "commits": args.commits}
    result.update(scenarios(work, "AGENTS.md", args.runs, tmp / "cache"))
    result["naive_seconds"] = round(naive(work, files, anchor), 3)
    return result


_SPAN = re.compile(r"`([^`\s]+)`")


def real(args, tmp: Path) -> dict:
    src = Path(args.repo).resolve()
    work = tmp / "work"
    say(f"cloning {src}")
    proc = subprocess.run(["git", "clone", "-q", str(src), str(work)], env=ENV, capture_output=True, text=True)
    if not (work / ".git").is_dir():
        raise SystemExit(f"cannot clone {src}: {proc.stderr}")
    if proc.returncode != 0:  # a blob the mirror lacks: the index as HEAD, every file that can be read
        say(f"checkout incomplete ({proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'})")
        git(work, "reset", "-q")
        git(work, "checkout-index", "-a", "-q", check=False)
    if not (work / args.file).is_file():
        raise SystemExit(f"{args.file}: not in {src} at HEAD")
    text = (work / args.file).read_text(encoding="utf-8", errors="replace")
    last = git(work, "log", "-1", "--format=%H", "--", args.file).strip()
    result = {"case": "real", "repo": src.name if src.name != "repo" else src.parent.name, "file": args.file,
              "lines": len(text.splitlines()), "commits": int(git(work, "rev-list", "--count", "HEAD")),
              "commits_since_file_changed": int(git(work, "rev-list", "--count", f"{last}..HEAD")) if last else None,
              "blame_commits": len({ln.split()[0] for ln in git(work, "blame", "--porcelain", "--", args.file).splitlines()
                                    if re.match(r"^[0-9a-f]{40} \d+ \d+", ln)})}
    result.update(scenarios(work, args.file, args.runs, tmp / "cache"))
    refs = sorted({m for m in _SPAN.findall(text) if ("/" in m or "." in m) and not m.startswith(("http", "-"))})
    result["naive_references"] = len(refs)
    result["naive_seconds"] = round(naive(work, refs, last or None), 3)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--lines", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repo", help="a git checkout or bare mirror to lint a memory file of (real case)")
    ap.add_argument("--file", default="AGENTS.md", help="with --repo: the memory file, relative to its root")
    args = ap.parse_args()
    # bytecode written before timing: a first run must not pay for compiling a fresh checkout
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "src")], env=ENV, capture_output=True)
    load_start = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="memtui-lint-"))
    try:
        result = real(args, tmp) if args.repo else synthetic(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["target_seconds"] = TARGET
    result["load_avg_1m"] = [round(load_start, 2), round(os.getloadavg()[0], 2)]
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
