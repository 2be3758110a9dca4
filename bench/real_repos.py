"""Revalidation on real repositories, against hand labels (issue 8, "Evaluation on real repositories").

    .venv/bin/python bench/real_repos.py MIRRORS_DIR [--corpus bench/corpus] [--only NAME] [--details]
        [--mode references|import_at_head|both]

Two modes (both by default, one JSON object keyed by mode):

* ``references`` (issue 8): the memory file as first written, the code moved on under it (below);
* ``import_at_head`` (issue 23): clone at ``importAtHead.commit``, ``memtui import MEMORYFILE --repo .``
  of the file as it stands there, ``memtui maintain --only revalidate`` (no commit on top), then score
  ``importAtHead.references`` exactly as ``references`` (repositories without an ``importAtHead:`` block
  are skipped).

For ``references``:

For each labelled repository in ``bench/corpus/*.yaml`` (written by hand, checked with git, before
memtui was run on it): clone the mirror (``MIRRORS_DIR/owner+name/…``, as ``fetch`` leaves it)
into a temp folder at ``oldCommit``; ``memtui import MEMORYFILE --repo .`` (whole processes, the
production path); move the code to ``headCommit`` with the memory file left as written (a commit
on top of HEAD restoring the file's old text); ``memtui maintain``; then read the store and score
every labelled reference (line, text):

* held — a memory whose own line span covers the line holds evidence naming the reference
  (``target`` equal to the text, or its path equal to / ending with it);
* flagged — that evidence is ``changed`` or ``deleted`` (what sends the memory to review);
  for stale / moved labels the reason must also name the reference; a move is named when the
  evidence reports the labelled new path (``path_moved``, a relocated symbol, or a renamed symbol's
  new file, ``symbol_renamed``).

Prints one JSON object: ``stale_recall`` (stale + moved labels flagged with a reason naming
them), ``false_flag_rate`` (valid labels flagged), ``moves_named`` (moved labels reported with
the right new path), ``lines_lost`` (labelled references no memory holds), ``never_existed_flagged``,
``example_flagged``, ``seconds`` per repository and per-repository counts; ``naive``: the same figures
for the naive check in the same run (what the line wrote is missing at HEAD: ``ls-tree`` for paths,
``git grep -w`` for names; it names no move); ``--details`` adds each miss. Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
MEMTUI = [sys.executable, "-m", "memtui"]


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout


def find_mirror(mirrors: Path, repo: str, listed: dict[str, str]) -> Path | None:
    if repo in listed and Path(listed[repo]).exists():
        return Path(listed[repo])
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if (cand / "HEAD").exists() or (cand / ".git").exists():
            return cand
    hits = sorted(base.glob("**/HEAD")) if base.exists() else []
    return hits[0].parent if hits else None


def checkout(work: Path, rev: str) -> None:
    """Detach at ``rev``; files a snapshot lacks (objects of 4 MiB and more, as in a partial clone)
    are simply not written, so git's complaint about them is not an error here."""
    subprocess.run(["git", "checkout", "-q", "--detach", "-f", rev], cwd=work, env=GIT_ENV, capture_output=True)
    if git(work, "rev-parse", "HEAD").strip() != git(work, "rev-parse", f"{rev}^{{commit}}").strip():
        raise RuntimeError(f"cannot check out {rev}")


def commit_file(work: Path, rel: str, parent: str) -> None:
    """A commit on ``parent`` whose only change is ``rel`` as it is in the work tree (plumbing with a
    temporary index, so objects the snapshot lacks do not matter); HEAD moves to it."""
    env = {**GIT_ENV, "GIT_INDEX_FILE": str(work / ".git" / "bench-index")}
    run = lambda *a: subprocess.run(["git", *a], cwd=work, env=env, check=True, capture_output=True,  # noqa: E731
                                    text=True).stdout.strip()
    run("read-tree", parent)
    blob = run("hash-object", "-w", "--", rel)
    run("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
    tree = run("write-tree", "--missing-ok")
    if tree == run("rev-parse", f"{parent}^{{tree}}"):
        return
    new = run("commit-tree", tree, "-p", parent, "-m", "memory file as it was written")
    run("update-ref", "--no-deref", "HEAD", new)


def memtui(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**GIT_ENV, "PYTHONPATH": str(ROOT / "src"), "MEMTUI_ACTOR": "bench"}
    return subprocess.run([*MEMTUI, *args], cwd=cwd, env=env, capture_output=True, text=True)


def run_one(spec: dict, mirror: Path, tmp: Path) -> dict:
    work = tmp / "work"
    db = tmp / "memtui.db"
    t0 = time.perf_counter()
    git(tmp, "clone", "-q", "--no-checkout", "--shared", str(mirror), str(work))
    checkout(work, spec["oldCommit"])
    memfile = spec["memoryFile"]
    name = spec["repo"].split("/")[-1].lower()  # the canonical repository key (issue 21)
    imp = memtui("--db", str(db), "import", memfile, "--repo", ".", "--repository-id", name, cwd=work)
    if imp.returncode != 0:
        raise RuntimeError(f"import failed: {imp.stderr.strip()[-500:]}")
    t_import = time.perf_counter() - t0
    old_text = git(work, "show", f"{spec['oldCommit']}:{memfile}")
    checkout(work, spec["headCommit"])
    target = work / memfile
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(old_text)
    commit_file(work, memfile, spec["headCommit"])
    t1 = time.perf_counter()
    mt = memtui("--db", str(db), "maintain", "--only", "revalidate", "--repo", name, cwd=work)
    if mt.returncode != 0:
        raise RuntimeError(f"maintain failed: {mt.stderr.strip()[-500:]}")
    t_maintain = time.perf_counter() - t1
    return {"db": db, "import_seconds": t_import, "maintain_seconds": t_maintain, "work": work,
            "maintain_out": mt.stdout.strip().splitlines()[-1:] if mt.stdout else []}


def run_at_head(spec: dict, mirror: Path, tmp: Path) -> dict:
    """The ``import_at_head`` mode: the memory file imported as it stands at ``importAtHead.commit``, then
    ``maintain --only revalidate`` on the same commit (what a maintainer runs on today's file)."""
    at = spec["importAtHead"]
    work, db = tmp / "work", tmp / "memtui.db"
    t0 = time.perf_counter()
    git(tmp, "clone", "-q", "--no-checkout", "--shared", str(mirror), str(work))
    checkout(work, at["commit"])
    name = spec["repo"].split("/")[-1].lower()  # the canonical repository key (issue 21)
    imp = memtui("--db", str(db), "import", at["memoryFile"], "--repo", ".", "--repository-id", name, cwd=work)
    if imp.returncode != 0:
        raise RuntimeError(f"import failed: {imp.stderr.strip()[-500:]}")
    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    mt = memtui("--db", str(db), "maintain", "--only", "revalidate", "--repo", name, cwd=work)
    if mt.returncode != 0:
        raise RuntimeError(f"maintain failed: {mt.stderr.strip()[-500:]}")
    return {"db": db, "import_seconds": t_import, "maintain_seconds": time.perf_counter() - t1, "work": work}


def naive(spec: dict, work: Path, head: str) -> dict:
    """The naive check on the same labels (``spec["references"]``) at ``head``: a reference is stale when
    what the line wrote is not there — a path (``./`` and a leading ``/`` dropped) that ``git ls-tree`` does
    not list, a package (``a.b.c``, a trailing ``.*`` dropped) that is no folder (``a/b/c`` or a folder named
    ``a.b.c``), or a name (a symbol, a glob's literal part) that ``git grep -w`` finds in no file; it never
    names a new path; ``not-a-reference`` labels are skipped."""
    listed = git(work, "ls-tree", "-r", "--name-only", "--full-tree", head).splitlines()
    paths = set(listed) | {"/".join(p.split("/")[:k]) for p in listed for k in range(1, p.count("/") + 1)}
    words = sorted({re.sub(r"\(.*\)$", "", str(r["text"]).strip("`")).replace("::", ".").rsplit(".", 1)[-1]
                    for r in spec.get("references") or [] if r.get("kind") == "symbol"} - {""})
    found: set[str] = set()
    if words:
        args = ["grep", "-h", "-o", "-w", "-F", "-I"] + [a for w in words for a in ("-e", w)] + [head, "--"]
        out = subprocess.run(["git", *args], cwd=work, env=GIT_ENV, capture_output=True, text=True).stdout
        found = set(out.split())
    hit = {"stale_flagged": 0, "valid_flagged": 0, "moved_named": 0}
    dirs = sorted(paths - set(listed))
    for ref in spec.get("references") or []:
        text = str(ref["text"]).strip().strip("`")
        if ref["label"] == "not-a-reference":
            continue
        if ref.get("kind") == "package":
            pkg = text.removesuffix(".*").rstrip(".;")
            slashed = pkg.replace(".", "/")
            gone = not any(d == slashed or d.endswith("/" + slashed) or d.rsplit("/", 1)[-1] == pkg for d in dirs)
        elif ref.get("kind") == "symbol":
            gone = re.sub(r"\(.*\)$", "", text).replace("::", ".").rsplit(".", 1)[-1] not in found
        else:
            gone = re.sub(r"^(?:mdc:|classpath:)", "", text).lstrip("/").removeprefix("./").rstrip("/") not in paths
        if ref["label"] in ("stale", "moved"):
            hit["stale_flagged"] += gone
        elif ref["label"] == "valid":
            hit["valid_flagged"] += gone
    return hit


def load_store(db: Path, memfile: str):
    from sqlmodel import Session, select

    from memtui.store.engine import open_store
    from memtui.store.models import Evidence, Memory

    engine = open_store(str(db))
    with Session(engine) as s:
        memories = {m.memory_id: m.state for m in s.exec(select(Memory))}
        rows = list(s.exec(select(Evidence).order_by(Evidence.memory_id, Evidence.ordinal)))
    engine.dispose()
    spans: dict[str, tuple[int, int]] = {}
    evidence: dict[str, list] = {}
    for e in rows:
        evidence.setdefault(e.memory_id, []).append(e)
        if e.memory_id not in spans and e.path == memfile and e.line_start is not None and e.ref not in ("mention", "example"):
            spans[e.memory_id] = (e.line_start, e.line_end or e.line_start)
    return memories, spans, evidence


def names(e, text: str) -> bool:
    t = text.strip().strip("`")
    bare = t.rstrip("/")
    if (e.target or "").strip().strip("`") in (t, bare) or (e.symbol and e.symbol in (t, t.rstrip("()"))):
        return True
    p = (e.path or "").rstrip("/")
    if p and bare and (p == bare.removeprefix("./") or p.endswith("/" + bare.removeprefix("./"))):
        return True  # held under the full path it resolved to (a tree entry, a heading's folder)
    w = (e.target or "").strip().rstrip("/")
    return bool(w) and "/" in w and (w.endswith("/" + bare) or bare.endswith("/" + w))


def _glob_form(path: str | None) -> str:
    """A path compared as a glob: ``db/migration/{vendor}`` (a placeholder segment, as the line wrote it)
    and ``db/migration/*`` (as a label may write the same) are one pattern; a trailing ``/`` is dropped."""
    return re.sub(r"(?<!\$)\{[A-Za-z_][\w-]*\}", "*", (path or "").rstrip("/"))


#: labels whose flag is a false flag, and the counter it goes to
FALSE_FLAGS = {"valid": "valid_flagged", "never-existed": "never_flagged", "example": "example_flagged",
               "not-a-reference": "not_a_reference_flagged"}


def score(spec: dict, memories, spans, evidence) -> dict:
    """Per-repository counts for ``spec["references"]``. A ``not-a-reference`` label (a URL, a Docker image,
    a home path ...) is a false flag when evidence naming it is flagged, and never lost when none holds it."""
    counts = {k: 0 for k in ("valid", "moved", "stale", "never-existed", "example", "not-a-reference")}
    hit = {"stale_flagged": 0, "valid_flagged": 0, "moved_named": 0, "lost": 0, "never_flagged": 0,
           "example_flagged": 0, "not_a_reference_flagged": 0}
    misses: list[str] = []
    for ref in spec.get("references") or []:
        label, line, text = ref["label"], int(ref["line"]), str(ref["text"])
        counts[label] = counts.get(label, 0) + 1
        holders = [mid for mid, (a, b) in spans.items() if a <= line <= b]
        evs = [e for mid in holders for e in evidence.get(mid, []) if e.ref in ("mention", "example") and names(e, text)]
        if not evs:
            if label == "not-a-reference":
                continue  # holding nothing for it is right
            hit["lost"] += 1
            misses.append(f"lost {label} line {line} {text!r}")
            continue
        flagged = [e for e in evs if e.status in ("changed", "deleted", "unverifiable")]
        if label in ("stale", "moved"):
            named = [e for e in flagged if e.status in ("changed", "deleted")
                     and (text.strip("`/") in (e.status_reason or "") or (e.path or "~") in (e.status_reason or ""))]
            if named:
                hit["stale_flagged"] += 1
            else:
                misses.append(f"missed {label} line {line} {text!r}: " + "; ".join(
                    f"{e.status}/{e.reason_code}: {e.status_reason}" for e in evs))
            if label == "moved":
                want = _glob_form(str(ref.get("newPath") or ""))
                if any(e.reason_code == "path_moved" and _glob_form(e.current_path) == want for e in flagged) or \
                        any(e.status == "valid" and e.reason_code == "symbol_relocated" and e.current_path == want
                            for e in evs) or \
                        any(e.reason_code == "symbol_renamed" and e.current_path == want for e in flagged):
                    hit["moved_named"] += 1
                else:
                    misses.append(f"move not named line {line} {text!r} -> {want}: " + "; ".join(
                        f"{e.status}/{e.reason_code}/{e.current_path}" for e in evs))
        elif flagged:
            hit[FALSE_FLAGS[label]] += 1
            misses.append(f"false flag ({label}) line {line} {text!r}: " + "; ".join(
                f"{e.status}/{e.reason_code}: {e.status_reason}" for e in flagged))
    flags = sum(1 for mid in memories if memories[mid] in ("needs_review", "invalidated"))
    return {"counts": counts, **hit, "memories": len(memories), "memories_flagged": flags, "misses": misses}


COUNTERS = ("stale_flagged", "valid_flagged", "moved_named", "lost", "never_flagged", "example_flagged",
            "not_a_reference_flagged")
LABELS = ("valid", "moved", "stale", "never-existed", "example", "not-a-reference")


def run_mode(mode: str, args, listed: dict[str, str]) -> dict:
    """One mode over the corpus: the figures (see the module doc)."""
    per_repo = {}
    totals = {k: 0 for k in (*LABELS, *COUNTERS, "refs")}
    naive_totals: dict[str, int] = {}
    for path in sorted(args.corpus.glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        if args.only and args.only not in spec["repo"]:
            continue
        if mode == "import_at_head":
            if not spec.get("importAtHead"):
                continue
            scored = {**spec, "references": spec["importAtHead"].get("references") or []}
            head = spec["importAtHead"]["commit"]
            memfile = spec["importAtHead"].get("memoryFile") or spec["memoryFile"]
        else:
            scored, head, memfile = spec, spec["headCommit"], spec["memoryFile"]
        mirror = find_mirror(args.mirrors, spec["repo"], listed)
        if mirror is None:
            say(f"{spec['repo']}: no mirror under {args.mirrors}; skipped")
            per_repo[spec["repo"]] = {"skipped": "no mirror"}
            continue
        say(f"[{mode}] {spec['repo']}: " + (f"{spec['oldCommit'][:7]} -> {head[:7]}" if mode == "references"
                                              else f"at {head[:7]}"))
        tmp = Path(tempfile.mkdtemp(prefix="memtui-real-"))
        try:
            t0 = time.perf_counter()
            run = run_one(spec, mirror, tmp) if mode == "references" else run_at_head(spec, mirror, tmp)
            memories, spans, evidence = load_store(run["db"], memfile)
            result = score(scored, memories, spans, evidence)
            result["seconds"] = round(time.perf_counter() - t0, 2)
            result["import_seconds"] = round(run["import_seconds"], 2)
            result["maintain_seconds"] = round(run["maintain_seconds"], 2)
            result["naive"] = naive(scored, run["work"], head)
        except Exception as exc:  # one broken repository does not stop the corpus
            per_repo[spec["repo"]] = {"error": str(exc)}
            say(f"  error: {exc}")
            continue
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        for k, v in result["counts"].items():
            totals[k] = totals.get(k, 0) + v
            totals["refs"] += v
        for k in COUNTERS:
            totals[k] += result[k]
        for k, v in result["naive"].items():
            naive_totals[k] = naive_totals.get(k, 0) + v
        if not args.details:
            result.pop("misses")
        per_repo[spec["repo"]] = result
    gone = totals["stale"] + totals["moved"]
    # a flagged not-a-reference is a false flag: over valid + not-a-reference labels
    valid_like = totals["valid"] + totals["not-a-reference"]
    false_flags = totals["valid_flagged"] + totals["not_a_reference_flagged"]
    return {
        "mode": mode,
        "repositories": len([r for r in per_repo.values() if "counts" in r]),
        "references": totals["refs"],
        "labels": {k: totals[k] for k in LABELS},
        "stale_recall": round(totals["stale_flagged"] / gone, 3) if gone else None,
        "false_flag_rate": round(false_flags / valid_like, 3) if valid_like else None,
        "moves_named": round(totals["moved_named"] / totals["moved"], 3) if totals["moved"] else None,
        "lines_lost": totals["lost"],
        "never_existed_flagged": totals["never_flagged"],
        "example_flagged": totals["example_flagged"],
        "not_a_reference_flagged": totals["not_a_reference_flagged"],
        "targets": {"stale_recall": 0.97, "false_flag_rate": 0.02, "moves_named": 0.95, "lines_lost": 0},
        "naive": {  # the same labels checked as written (see naive()): what memtui adds over it
            "stale_recall": round(naive_totals.get("stale_flagged", 0) / gone, 3) if gone else None,
            "false_flag_rate": round(naive_totals.get("valid_flagged", 0) / totals["valid"], 3) if totals["valid"] else None,
            "moves_named": 0.0 if totals["moved"] else None},
        "seconds": {repo: r.get("seconds") for repo, r in per_repo.items()},
        "per_repository": per_repo,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mirrors", type=Path, nargs="?", default=Path("/work/.mirror"),
                    help="where fetch left the snapshots (default /work/.mirror)")
    ap.add_argument("--corpus", type=Path, default=ROOT / "bench" / "corpus")
    ap.add_argument("--only", default=None)
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--mode", choices=("references", "import_at_head", "both"), default="both")
    args = ap.parse_args()
    listed = {}
    mf = args.corpus / "MIRRORS.txt"
    if mf.exists():
        for line in mf.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 2:
                listed[parts[0]] = parts[1]
    modes = ("references", "import_at_head") if args.mode == "both" else (args.mode,)
    out: dict = {"corpus": str(args.corpus), "load_avg_1m": round(os.getloadavg()[0], 2)}
    out["modes"] = {m: run_mode(m, args, listed) for m in modes}
    out["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
