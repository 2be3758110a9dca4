"""Conflicts and duplicate clusters on real agent memory files (issue 20).

    .venv/bin/python bench/real_files.py MIRRORS_DIR [--split tune|blind|all] [--only NAME]
        [--corpus bench/real_files_corpus.yaml] [--labels bench/real_files_labels.yaml]
        [--python PYTHON | --memtui EXE] [--details FILE] [--keep]

For each repository of the corpus (``bench/real_files_corpus.yaml``: the repository, its pinned
commit, its memory files): clone the snapshot (``MIRRORS_DIR/owner+name/repo``, as ``fetch`` leaves
it, or ``MIRRORS_DIR/owner+name``) into a temp folder named after the repository, check out the
pinned commit, and run memtui as whole processes, exactly as a new user would, from inside the
checkout:

    memtui --db T/m.db import FILE... --repo .   (again with --skip-invalid if it refuses records)
    memtui --db T/m.db maintain --repo .
    memtui --db T/m.db conflicts --json      (and --possible, when the CLI offers it)
    memtui --db T/m.db duplicates --json     (and --possible, when the CLI offers it)
    memtui --db T/m.db export json           (statements, source file and line of every memory)

The bench never imports memtui: it only runs the public CLI. Which memtui runs: ``--memtui EXE``
(env ``MEMTUI_BIN``), else ``PYTHON -m memtui`` with ``--python`` (env ``MEMTUI_PYTHON``; default this
interpreter). The environment (PYTHONPATH included) is passed through to every subprocess, so
``PYTHONPATH=/tmp/base-src/src`` measures another worktree with the same venv.

Prints ONE JSON object (progress goes to stderr): per repository and in total (also per split)
``lines_imported`` (memories imported), ``conflicts`` (open conflict records, the default listing),
``conflicts_per_100_lines``, ``memories_held_out_by_conflicts`` (distinct memories in an open
conflict) and ``..._per_100_lines``, ``duplicate_clusters`` (open clusters), ``possible_conflicts`` /
``possible_duplicates`` (``null`` when the CLI has no ``--possible``), ``seconds``; against the hand
labels (``bench/real_files_labels.yaml``, matched by the set of (memory file, line) of the members):
``conflict_precision`` and ``duplicate_cluster_precision`` over the labelled items, with
``*_labelled`` / ``*_unlabelled`` counts (and the same for the possible lists); ``import_refused``
(records the plain import refused, so it was re-run with ``--skip-invalid``). A repository that
fails is reported under ``error`` and counted nowhere; the run goes on.

``--details FILE`` writes every item (members with file, line and statement, the reason, the label
if any) as JSON: what a labeller reads.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_TERMINAL_PROMPT": "0"}
TIMEOUT = 1800


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout


def find_mirror(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base, base / ".git"):
        if cand.is_dir() and (cand / "HEAD").exists() and (cand / "objects").is_dir():
            return cand
    return None


class Failed(Exception):
    pass


class Memtui:
    def __init__(self, cmd: list[str], db: Path, cwd: Path):
        self.cmd, self.db, self.cwd = cmd, db, cwd

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([*self.cmd, "--db", str(self.db), *args], cwd=self.cwd, env=os.environ,
                           capture_output=True, text=True, timeout=TIMEOUT)
        if check and p.returncode != 0:
            raise Failed(f"memtui {' '.join(args[:2])} exited {p.returncode}: "
                         f"{(p.stderr or p.stdout).strip()[-800:]}")
        return p

    def listing(self, what: str, possible: bool = False) -> list | None:
        """``what --json`` (``--possible`` too when asked); None when the CLI has no such option."""
        args = [what, "--json"] + (["--possible"] if possible else [])
        p = self.run(*args, check=not possible)
        if p.returncode != 0:
            err = (p.stderr + p.stdout).lower()
            if possible and ("no such option" in err or "unexpected extra argument" in err
                             or "unknown option" in err):
                return None
            raise Failed(f"memtui {' '.join(args)} exited {p.returncode}: {err.strip()[-800:]}")
        out = json.loads(p.stdout or "[]")
        if isinstance(out, dict):  # tolerate {"conflicts": [...]} / {"clusters": [...]} shapes
            for k in ("conflicts", "clusters", "items", "duplicates"):
                if isinstance(out.get(k), list):
                    return out[k]
            return []
        return out


def where(mem: dict) -> tuple[str, int] | None:
    """(memory file, line) a memory was imported from: its source:/line: tags, else its first
    file span."""
    tags = mem.get("tags") or []
    src = next((t[len("source:"):] for t in tags if t.startswith("source:")), None)
    line = next((t[len("line:"):] for t in tags if t.startswith("line:")), None)
    if src and line and line.isdigit():
        return src, int(line)
    for ev in mem.get("evidence") or []:
        if ev.get("type") == "file_span" and ev.get("lines"):
            return ev.get("path"), int(ev["lines"][0])
    return None


def item_key(members: list[dict]) -> tuple:
    return tuple(sorted((m["file"], m["line"]) for m in members))


def load_labels(path: Path) -> dict:
    """{repo: {"conflicts": {key: label}, "duplicates": {key: label}}}; key = sorted (file, line)."""
    if not path.exists():
        return {}
    doc = yaml.safe_load(path.read_text()) or {}
    out: dict = {}
    # The first batch is `repositories`; later labelling rounds append `batches: [{repositories: …}]`.
    # Append-only: an item labelled in an earlier batch keeps that label.
    for batch in [doc] + list(doc.get("batches") or []):
        for repo, kinds in (batch.get("repositories") or {}).items():
            for kind in ("conflicts", "duplicates"):
                for it in (kinds or {}).get(kind) or []:
                    key = tuple(sorted((m["file"], int(m["line"])) for m in it["members"]))
                    out.setdefault(repo, {}).setdefault(kind, {}).setdefault(key, {
                        "label": bool(it["label"]), "why": it.get("why", "")})
    return out


def score(items: list[dict], labels: dict) -> dict:
    lab = [labels[it["key"]]["label"] for it in items if it["key"] in labels]
    return {"labelled": len(lab), "true": sum(lab), "unlabelled": len(items) - len(lab)}


def per100(n: int, lines: int) -> float | None:
    return round(100.0 * n / lines, 2) if lines else None


def run_repo(entry: dict, mirrors: Path, cmd: list[str], labels: dict, keep: bool) -> tuple[dict, list]:
    repo, commit, files = entry["repo"], entry["commit"], list(entry.get("files") or [])
    res: dict = {"repo": repo, "split": entry.get("split"), "commit": commit,
                 "memory_files": len(files)}
    t0 = time.monotonic()
    mirror = find_mirror(mirrors, repo)
    if mirror is None:
        raise Failed(f"no snapshot under {mirrors} for {repo}")
    tmp = Path(tempfile.mkdtemp(prefix="real-files-"))
    try:
        checkout = tmp / repo.split("/")[1]
        git(tmp, "clone", "-q", "--no-checkout", "--shared", str(mirror), str(checkout))
        git(checkout, "checkout", "-q", "--detach", commit)
        present = [f for f in files if (checkout / f).is_file()]
        if len(present) != len(files):
            res["missing_files"] = sorted(set(files) - set(present))
        m = Memtui(cmd, tmp / "m.db", checkout)
        if present:
            imp = m.run("import", *present, "--repo", ".", check=False)
            if imp.returncode != 0:
                # A real file can hold a record memtui refuses (e.g. a statement over the default
                # --max-statement-bytes); the import is all or nothing, so a new user re-runs it
                # with --skip-invalid, as the message suggests. Reported, not hidden.
                refused = [ln.strip() for ln in (imp.stderr + imp.stdout).splitlines()
                           if ": line " in ln and "record" in ln]
                res["import_refused"] = len(refused)
                res["import_refused_why"] = refused[:5]
                m.run("import", "--skip-invalid", *present, "--repo", ".")
            m.run("maintain", "--repo", ".")
            exp = json.loads(m.run("export", "json").stdout)
            mems = {x["memoryId"]: x for x in exp.get("memories") or []}
            conflicts = m.listing("conflicts")
            dups = m.listing("duplicates")
            pconf = m.listing("conflicts", possible=True)
            pdups = m.listing("duplicates", possible=True)
        else:
            mems, conflicts, dups, pconf, pdups = {}, [], [], None, None
        res["lines_imported"] = len(mems)
        rl = labels.get(repo, {})
        details: list = []

        def items(kind: str, listed: list | None, ids_key: str, possible: bool) -> list[dict] | None:
            if listed is None:
                return None
            out = []
            for rec in listed:
                members = []
                for mid in rec.get(ids_key) or []:
                    mem = mems.get(mid) or {}
                    w = where(mem) or ("?", 0)
                    members.append({"id": mid, "file": w[0], "line": w[1],
                                    "statement": mem.get("statement", "")})
                key = item_key(members)
                lab = rl.get(kind, {}).get(key)
                out.append({"key": key, "members": members})
                details.append({"repo": repo, "kind": kind, "possible": possible,
                                "id": rec.get("conflictId") or rec.get("clusterId"),
                                "status": rec.get("status"), "severity": rec.get("severity"),
                                "method": rec.get("method"), "score": rec.get("bestScore"),
                                "reason": rec.get("reason") or rec.get("explanation"),
                                "members": members,
                                "label": None if lab is None else lab["label"],
                                "why": None if lab is None else lab["why"]})
            return out

        ci = items("conflicts", conflicts, "memories", False)
        di = items("duplicates", dups, "members", False)
        pci = items("conflicts", pconf, "memories", True)
        pdi = items("duplicates", pdups, "members", True)
        held = {x["id"] for it in ci for x in it["members"]}
        lines = res["lines_imported"]
        res.update({
            "conflicts": len(ci), "conflicts_per_100_lines": per100(len(ci), lines),
            "memories_held_out_by_conflicts": len(held),
            "memories_held_out_by_conflicts_per_100_lines": per100(len(held), lines),
            "duplicate_clusters": len(di),
            "duplicate_memories": len({x["id"] for it in di for x in it["members"]}),
            "possible_conflicts": None if pci is None else len(pci),
            "possible_duplicates": None if pdi is None else len(pdi),
            "_conflict_labels": score(ci, rl.get("conflicts", {})),
            "_duplicate_labels": score(di, rl.get("duplicates", {})),
            "_possible_conflict_labels": None if pci is None else score(pci, rl.get("conflicts", {})),
            "_possible_duplicate_labels": None if pdi is None else score(pdi, rl.get("duplicates", {})),
        })
        res["seconds"] = round(time.monotonic() - t0, 1)
        return res, details
    finally:
        if keep:
            say(f"  kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def precision(s: dict | None) -> dict:
    if s is None:
        return {"precision": None, "labelled": None, "unlabelled": None}
    return {"precision": round(s["true"] / s["labelled"], 3) if s["labelled"] else None,
            "labelled": s["labelled"], "unlabelled": s["unlabelled"]}


def add(a: dict | None, b: dict | None) -> dict | None:
    if a is None or b is None:
        return a or b
    return {k: a[k] + b[k] for k in a}


def finish(r: dict) -> dict:
    """Turn the private label tallies into the public precision fields."""
    for name, key in (("conflict", "_conflict_labels"), ("duplicate_cluster", "_duplicate_labels"),
                      ("possible_conflict", "_possible_conflict_labels"),
                      ("possible_duplicate", "_possible_duplicate_labels")):
        p = precision(r.pop(key, None))
        r[f"{name}_precision"] = p["precision"]
        r[f"{name}s_labelled"] = p["labelled"]
        r[f"{name}s_unlabelled"] = p["unlabelled"]
    return r


def total(rows: list[dict]) -> dict:
    ok = [r for r in rows if "error" not in r]
    t: dict = {"repositories": len(ok), "failed": len(rows) - len(ok)}
    t["repositories_needing_skip_invalid"] = sum(1 for r in ok if r.get("import_refused"))
    t["import_refused"] = sum(r.get("import_refused", 0) for r in ok)
    for k in ("memory_files", "lines_imported", "conflicts", "memories_held_out_by_conflicts",
              "duplicate_clusters", "duplicate_memories"):
        t[k] = sum(r.get(k, 0) for r in ok)
    for k in ("possible_conflicts", "possible_duplicates"):
        vals = [r.get(k) for r in ok if r.get(k) is not None]
        t[k] = sum(vals) if vals else None
    t["conflicts_per_100_lines"] = per100(t["conflicts"], t["lines_imported"])
    t["memories_held_out_by_conflicts_per_100_lines"] = per100(
        t["memories_held_out_by_conflicts"], t["lines_imported"])
    for key in ("_conflict_labels", "_duplicate_labels", "_possible_conflict_labels",
                "_possible_duplicate_labels"):
        acc = None
        for r in ok:
            acc = add(acc, r.get(key))
        t[key] = acc
    t["seconds"] = round(sum(r.get("seconds", 0) for r in rows), 1)
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mirrors", type=Path)
    ap.add_argument("--split", choices=("tune", "blind", "all"), default="all")
    ap.add_argument("--only", action="append", default=[],
                    help="owner/name or name (repeatable)")
    ap.add_argument("--corpus", type=Path, default=ROOT / "bench" / "real_files_corpus.yaml")
    ap.add_argument("--labels", type=Path, default=ROOT / "bench" / "real_files_labels.yaml")
    ap.add_argument("--python", default=os.environ.get("MEMTUI_PYTHON", sys.executable),
                    help="interpreter that runs `-m memtui` (env MEMTUI_PYTHON)")
    ap.add_argument("--memtui", default=os.environ.get("MEMTUI_BIN"),
                    help="a memtui executable instead of PYTHON -m memtui (env MEMTUI_BIN)")
    ap.add_argument("--details", type=Path, help="write every item (members, reason, label) here")
    ap.add_argument("--keep", action="store_true", help="keep the temp checkouts and stores")
    a = ap.parse_args()

    cmd = [a.memtui] if a.memtui else [a.python, "-m", "memtui"]
    corpus = yaml.safe_load(a.corpus.read_text())["repositories"]
    if a.split != "all":
        corpus = [e for e in corpus if e.get("split") == a.split]
    if a.only:
        corpus = [e for e in corpus if e["repo"] in a.only or e["repo"].split("/")[1] in a.only]
    labels = load_labels(a.labels)
    where_from = subprocess.run([*cmd[:-2], "-c", "import memtui; print(memtui.__file__)"],
                                capture_output=True, text=True, env=os.environ).stdout.strip() \
        if not a.memtui else a.memtui
    say(f"memtui: {' '.join(cmd)} ({where_from})")

    rows: list[dict] = []
    details: list = []
    for e in corpus:
        say(f"{e['repo']} @ {e['commit'][:12]}: {len(e.get('files') or [])} files")
        t0 = time.monotonic()
        try:
            r, d = run_repo(e, a.mirrors, cmd, labels, a.keep)
            details += d
            say(f"  {r['lines_imported']} lines, {r['conflicts']} conflicts, "
                f"{r['duplicate_clusters']} clusters, {r['seconds']} s")
        except Exception as exc:  # one repository failing is a result, not a crash
            r = {"repo": e["repo"], "split": e.get("split"), "commit": e.get("commit"),
                 "error": f"{type(exc).__name__}: {str(exc)[:1000]}",
                 "seconds": round(time.monotonic() - t0, 1)}
            say(f"  FAILED: {r['error']}")
        rows.append(r)

    out = {"memtui": where_from, "command": cmd, "split": a.split,
           "total": finish(total(rows)),
           "by_split": {s: finish(total([r for r in rows if r.get("split") == s]))
                        for s in ("tune", "blind") if any(r.get("split") == s for r in rows)},
           "repositories": {r["repo"]: finish(r) for r in rows}}
    if a.details:
        a.details.write_text(json.dumps(details, indent=1, ensure_ascii=False, default=list))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
