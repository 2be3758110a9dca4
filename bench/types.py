"""Types of imported memory-file lines against hand labels (issue 20).

    .venv/bin/python bench/types.py MIRRORS_DIR [--split tune|blind|all] [--labels bench/types/labels.yaml]
        [--python PYTHON | --memtui EXE] [--only OWNER/NAME] [--details]

For each repository of ``bench/types/labels.yaml`` (labelled blind, without memtui's types, split
frozen before any scoring): clone the snapshot (``MIRRORS_DIR/owner+name/repo``, as ``fetch`` leaves
it) into a temp folder at the pinned ``commit``, run ``memtui --db STORE import FILES --repo .`` and
``memtui --db STORE export json`` as whole processes, and read each memory's ``type`` at every
(path, first line) of its file-span evidence in the imported files. Labelled items are matched by
(file, line).

The bench never imports memtui: it only runs the public CLI. Which memtui runs: ``--memtui EXE``
(env ``MEMTUI_BIN``), else ``PYTHON -m memtui`` with ``--python`` (env ``MEMTUI_PYTHON``; default
this interpreter). The environment (PYTHONPATH included) is passed through to every subprocess, so
``PYTHONPATH=/tmp/types-base/src`` measures another worktree with the same venv.

Prints one JSON object: per split asked for (``tune``, ``blind``, and ``all`` for ``--split all``)
``accuracy`` (matched items whose predicted type equals the label), ``matched``, ``unmatched`` (no
imported memory at that (file, line)), ``per_label`` recall, ``confusion`` (label -> predicted ->
count, ``"(none)"`` for unmatched), ``off_diagonal`` (the biggest label -> predicted cells) and
``expires_by_task_policy`` (labelled non-task lines typed ``task``, which a task expiry policy would
retire); ``--details`` adds each miss. Progress goes to stderr.
"""

from __future__ import annotations

import sys


def _own_dir() -> str:
    import os  # loaded at start-up already; imports nothing that needs ``types``
    return os.path.dirname(os.path.realpath(__file__))


def _without_own_dir(paths: list[str]) -> list[str]:
    import os
    return [p for p in paths if os.path.realpath(p or os.curdir) != _own_dir()]


if __name__ == "types":
    # This file's name shadows the standard library's ``types`` for every script run from bench/
    # (``sys.path[0]`` is bench/, and ``re`` -> ``enum`` imports ``types``): hand that import the
    # real module (an importing module may replace itself in ``sys.modules``) and stop here.
    _saved = sys.path[:]
    sys.path[:] = _without_own_dir(sys.path)
    del sys.modules["types"]
    try:
        import types as _stdlib_types
    finally:
        sys.path[:] = _saved
    sys.modules["types"] = _stdlib_types
else:
    if __name__ == "__main__":
        sys.path[:] = _without_own_dir(sys.path)  # so that ``import types`` finds the standard library
    import argparse
    import collections
    import json
    import os
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    import yaml

    ROOT = Path(__file__).resolve().parents[1]
    LABELS = ROOT / "bench" / "types" / "labels.yaml"
    GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def find_mirror(mirrors: Path, repo: str) -> Path | None:
    base = mirrors / repo.replace("/", "+")
    for cand in (base / "repo", base):
        if (cand / "HEAD").exists() or (cand / ".git").exists():
            return cand
    return None


def checkout(mirror: Path, commit: str, work: Path) -> None:
    subprocess.run(["git", "clone", "-q", "--no-checkout", "--shared", str(mirror), str(work)],
                   env=GIT_ENV, check=True, capture_output=True)
    # files a snapshot lacks (objects of 4 MiB and more) are simply not written; not an error here
    subprocess.run(["git", "checkout", "-q", "--detach", "-f", commit], cwd=work, env=GIT_ENV, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, env=GIT_ENV, capture_output=True,
                          text=True).stdout.strip()
    if head != commit:
        raise RuntimeError(f"cannot check out {commit} (HEAD is {head or 'unborn'})")


def predicted_types(memtui: list[str], work: Path, files: list[str], tmp: Path) -> dict[tuple[str, int], str]:
    """(path, first line) of every file-span evidence in an imported file -> the memory's type."""
    db, out = tmp / "store.db", tmp / "export.json"
    env = {**os.environ, "MEMTUI_ACTOR": "bench"}
    imp = subprocess.run([*memtui, "--db", str(db), "import", *files, "--repo", ".", "--skip-invalid"],
                         cwd=work, env=env, capture_output=True, text=True)
    if imp.returncode != 0:
        raise RuntimeError(f"memtui import failed ({imp.returncode}): {imp.stderr.strip()[-800:]}")
    exp = subprocess.run([*memtui, "--db", str(db), "export", "json", "--out", str(out)],
                         cwd=work, env=env, capture_output=True, text=True)
    if exp.returncode != 0:
        raise RuntimeError(f"memtui export json failed ({exp.returncode}): {exp.stderr.strip()[-800:]}")
    data = json.loads(out.read_text())
    wanted = set(files)
    types: dict[tuple[str, int], str] = {}
    for m in data["memories"]:
        for e in m.get("evidence", []):
            if e.get("type") != "file_span" or e.get("ref") == "mention" or "lines" not in e:
                continue
            if e.get("path") in wanted:
                types.setdefault((e["path"], int(e["lines"][0])), m["type"])
    return types


def score(rows: list[dict]) -> dict:
    matched = [r for r in rows if r["predicted"] is not None]
    right = sum(r["predicted"] == r["label"] for r in matched)
    confusion: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for r in rows:
        confusion[r["label"]][r["predicted"] or "(none)"] += 1
    off = collections.Counter({(lab, pred): n for lab, c in confusion.items() for pred, n in c.items()
                               if pred != lab and pred != "(none)"})
    per_label = {lab: {"n": sum(c.values()), "recall": round(c[lab] / sum(c.values()), 3)}
                 for lab, c in sorted(confusion.items())}
    return {
        "items": len(rows),
        "matched": len(matched),
        "unmatched": len(rows) - len(matched),
        "correct": right,
        "accuracy": round(right / len(matched), 4) if matched else None,
        "per_label": per_label,
        "confusion": {lab: dict(c.most_common()) for lab, c in sorted(confusion.items())},
        "off_diagonal": [{"label": lab, "predicted": pred, "n": n} for (lab, pred), n in off.most_common(10)],
        "expires_by_task_policy": sum(1 for r in matched if r["label"] != "task" and r["predicted"] == "task"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mirrors", type=Path, help="folder of fetched snapshots (owner+name/repo)")
    ap.add_argument("--split", choices=("tune", "blind", "all"), default="tune")
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--python", default=os.environ.get("MEMTUI_PYTHON", sys.executable),
                    help="interpreter that runs `-m memtui` (environment passed through)")
    ap.add_argument("--memtui", default=os.environ.get("MEMTUI_BIN"), help="a memtui executable instead")
    ap.add_argument("--only", help="one repository (owner/name)")
    ap.add_argument("--details", action="store_true", help="list every miss")
    args = ap.parse_args()

    memtui = [args.memtui] if args.memtui else [args.python, "-m", "memtui"]
    spec = yaml.safe_load(args.labels.read_text())
    splits = ("tune", "blind") if args.split == "all" else (args.split,)
    rows: list[dict] = []
    seconds: dict[str, float] = {}
    missing: list[str] = []
    for repo in spec["repositories"]:
        items = [i for i in repo["items"] if i["split"] in splits]
        if not items or (args.only and repo["repo"] != args.only):
            continue
        mirror = find_mirror(args.mirrors, repo["repo"])
        if mirror is None:
            say(f"{repo['repo']}: no snapshot under {args.mirrors}")
            missing.append(repo["repo"])
            continue
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="memtui-types-") as tmp:
            work = Path(tmp) / "work"
            checkout(mirror, repo["commit"], work)
            types = predicted_types(memtui, work, repo["files"], Path(tmp))
        seconds[repo["repo"]] = round(time.monotonic() - t0, 1)
        for i in items:
            rows.append({"repo": repo["repo"], "split": i["split"], "file": i["file"], "line": i["line"],
                         "label": i["label"], "predicted": types.get((i["file"], int(i["line"]))),
                         "statement": i["statement"]})
        ok = sum(r["predicted"] == r["label"] for r in rows if r["repo"] == repo["repo"])
        say(f"{repo['repo']} ({items[0]['split']}): {ok}/{len(items)} in {seconds[repo['repo']]} s")

    result: dict = {"labels": str(args.labels.relative_to(ROOT) if args.labels.is_relative_to(ROOT) else args.labels),
                    "memtui": " ".join(memtui)}
    for s in splits:
        result[s] = score([r for r in rows if r["split"] == s])
    if args.split == "all":
        result["all"] = score(rows)
    result["repositories_missing"] = missing
    result["seconds"] = seconds
    if args.details:
        result["misses"] = [{k: r[k] for k in ("split", "repo", "file", "line", "label", "predicted", "statement")}
                            for r in rows if r["predicted"] != r["label"]]
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())
