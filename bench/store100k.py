"""A store of N memories built by ``memtui import`` of a JSON Lines file (issue 11, items 8-9).

:func:`build_store` ``(n, db_path) -> dict`` writes a deterministic JSONL of ``n`` records in the
design's shapes (docs/record-format.md: memory records of every common state with file-span,
symbol, call-edge, doc, ADR and human evidence, candidate records, promotion-gate candidates; about
1 in 200 holds a credential and 1 in 50 an e-mail address or home path, so the import's secret
and personal-data screening does real work), imports it with the ``memtui import`` CLI as a
subprocess, and copies the resulting SQLite store to ``db_path``. Built stores are cached under
``bench/.cache/store100k/`` by (n, a hash of ``src/memtui`` and this file): a second call copies.

Run as a script it prints one JSON object: ``n``, ``import_seconds`` (wall), ``import_cpu_seconds`` (user + system)
and ``import_peak_rss_mb`` (the whole ``memtui import`` process, from ``os.wait4``), ``memories`` (rows
in the store), ``load_avg_1m`` (the machine is shared: wall time follows its load), and
``baseline``: the same import by the code before the streaming import (commit ``BASELINE_COMMIT``,
checked out of git into a temporary folder) on ``--baseline-n`` records, beside the figures first
measured for 100,000 records with that code; and ``split``: an import of ``--split-n`` records run in
one interpreter with its CPU time split between the writing process and the forked reader
(:func:`split_cpu`: on two free cores the wall time is about the larger of the two).

    .venv/bin/python bench/store100k.py [--n 100000] [--baseline-n 10000 | --no-baseline] [--rebuild] [--split-n 20000]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / ".cache" / "store100k"
#: the last commit whose ``memtui import`` wrote record by record (the naive baseline)
BASELINE_COMMIT = "ffaa7b1"
#: the issue's measurement of that code on 100,000 records (issue 11, "Reviewer workstation at scale")
BASELINE_100K = {"n": 100_000, "import_seconds": 124.0, "import_peak_rss_mb": 1280.0}

_REPOS = [f"{name}-service" for name in ("order", "billing", "payments", "catalog", "search", "identity",
                                          "shipping", "pricing", "ledger", "notify", "gateway", "reports")]
_MODULES = ["api", "domain", "storage", "validation", "jobs", "web", "client", "config", "events", "auth",
            "metrics", "cache", "migrations", "rules", "pricing", "export"]
_NOUNS = ["RuleRegistry", "OrderValidator", "InvoiceBuilder", "RetryPolicy", "EventBus", "TokenCache",
          "RateLimiter", "LedgerWriter", "PriceTable", "SearchIndex", "SessionStore", "WebhookRouter",
          "AuditTrail", "FeatureFlags", "ShipmentPlanner", "CurrencyConverter", "SchemaMigrator",
          "ReportRenderer", "NotificationQueue", "AccountResolver"]
_VERBS = ["registers", "validates", "caches", "retries", "serialises", "publishes", "locks", "batches",
          "normalises", "rounds", "signs", "paginates", "throttles", "reconciles", "redacts"]
_TEMPLATES = [
    "{A} {v} every request through {B} before it reaches the {m} layer.",
    "Never call {A} directly from {m}; go through {B} so that retries stay idempotent.",
    "Tests for {m} use the in-memory {A} fake; the real {B} needs docker compose up db.",
    "Run `make {m}-check` before pushing: CI fails on unformatted {A} fixtures.",
    "{A}.{f} returns amounts in minor units (cents); {B} expects major units.",
    "The {m} module {v} payloads with {A} and logs failures to {B}.",
    "Prefer {A} over {B} for new code in {m}; {B} is kept for the v{k} API only.",
    "Migrations touching {m} tables must be backwards compatible for one release ({A} reads both shapes).",
    "When {A} times out, {B} falls back to the cached value for at most {k} minutes.",
    "Feature flag {m}_{f} gates the new {A} path; remove {B} once it is at 100%.",
    "ADR-{k:03d}: {m} owns {A}; other modules talk to it through {B} events only.",
    "Lesson: a failing {A} test in {m} was caused by {B} reading the wall clock; inject the clock.",
]
_FIELDS = ["resolve", "validate", "apply", "build", "flush", "lookup", "render", "publish"]
_STATES = (["candidate"] * 40 + ["needs_review"] * 15 + ["active"] * 20 + ["approved"] * 5 + ["challenged"] * 3
           + ["invalidated"] * 5 + ["rejected"] * 3 + ["archived"] * 4 + ["deprecated"] * 2 + ["expired"] * 3)
_TYPES = ["repo_convention", "code_fact", "test_convention", "runbook", "evaluation_lesson", "task"]
_SECRETS = ["AKIAIOSFODNN7EXAMPLE", "ghp_1A2b3C4d5E6f7G8h9I0jK1l2M3n4O5p6Q7r8", "password = hunter2-staging"]
_PERSONAL = ["ask alice@example.com before changing it", "the fixture lives in /home/alice/fixtures",
             "call +1 415 555 0100 if the job pages"]


def _sha(rng: random.Random) -> str:
    return "%040x" % rng.getrandbits(160)


def _evidence(rng: random.Random, repo: str | None, module: str, a: str, b: str) -> list[dict]:
    if repo is None:
        return [{"type": rng.choice(["doc", "adr", "human"]), "ref": f"handbook/{module}.md#{a.lower()}"}]
    base = f"src/{module}/{a}.py"
    out: list[dict] = []
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        kind = rng.choice(["file_span", "file_span", "symbol", "call_edge", "doc"])
        start = rng.randint(1, 400)
        e: dict = {"type": kind, "path": base, "commitSha": _sha(rng), "lines": [start, start + rng.randint(0, 40)],
                   "status": rng.choice(["valid", "valid", "unchecked"])}
        if kind == "symbol":
            e["symbol"] = f"{a}.{rng.choice(_FIELDS)}"
        elif kind == "call_edge":
            e["symbol"], e["target"] = f"{a}.{rng.choice(_FIELDS)}", f"{b}.{rng.choice(_FIELDS)}"
        elif kind == "doc":
            e = {"type": "doc", "path": f"docs/{module}.md", "commitSha": _sha(rng), "status": "valid"}
        if rng.random() < 0.3:
            e["excerpt"] = f"def {rng.choice(_FIELDS)}(self, item):\n    return self.{b[0].lower()}{b[1:]}.{rng.choice(_FIELDS)}(item)\n"
        out.append(e)
    return out


def record(i: int) -> dict:
    """Record ``i`` of the deterministic corpus (the same for every run and machine)."""
    rng = random.Random(i * 7919 + 17)
    a, b = rng.sample(_NOUNS, 2)
    module = rng.choice(_MODULES)
    text = rng.choice(_TEMPLATES).format(A=a, B=b, m=module, v=rng.choice(_VERBS), f=rng.choice(_FIELDS),
                                         k=rng.randint(1, 99))
    text += f" (case {i})"  # every statement distinct
    roll = rng.random()
    if roll < 0.005:
        text += f" The staging key is {rng.choice(_SECRETS)}."
    elif roll < 0.025:
        text += f" Note: {rng.choice(_PERSONAL)}."
    repo = None if rng.random() < 0.04 else rng.choice(_REPOS)
    tenant = rng.choice(["acme", "acme", "acme", "globex"])
    created = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"
    tags = rng.sample(_MODULES, rng.randint(0, 3))
    kind = rng.random()
    if kind < 0.08:  # a promotion-gate candidate (seed 003)
        return {"schema": "awtl.memory_candidate.v2", "candidate_id": f"awtl-{i:07d}",
                "failure_class": rng.choice(["agent_failure", "wrong_assumption", "flaky_test", "environment_blocker"]),
                "failure_type": rng.choice(["contract_mismatch", "missing_fixture", "timeout"]),
                "source_action_ids": [f"action-{i}-{k}" for k in range(rng.randint(1, 3))],
                "root_cause_summary": f"{a} changed without updating {b}.", "proposed_memory": text,
                "scope": {"applies_to": tags, "does_not_apply_to": []},
                "evidence_refs": [f"judge:{module}-verifier", f"artifact:{a.lower()}-output"],
                "verification_probe_candidate": f"{module}-regression", "promotion_status": "candidate",
                "requires_human_review": True, "repository_id": repo, "tenant_id": tenant, "created_at": created}
    scope = {"tenantId": tenant, **({"repositoryId": repo} if repo else {}),
             **({"modulePath": f"src/{module}"} if repo and rng.random() < 0.6 else {}),
             **({"appliesTo": tags[:1]} if tags and rng.random() < 0.3 else {})}
    evidence = _evidence(rng, repo, module, a, b)
    if kind < 0.2:  # a candidate record (design §6.3)
        return {"candidateId": f"cand-{i:07d}", "proposedType": rng.choice(_TYPES), "statement": text,
                "proposedScope": scope, "evidence": evidence, "confidence": round(rng.uniform(0.3, 0.9), 2),
                "proposedBy": {"type": "agent_workflow", "workflowRunId": f"wf_{i:07d}"},
                "validation": {"status": "pending_review"}, "createdAt": created, "tags": tags}
    state = rng.choice(_STATES)
    if repo is None and state in ("active", "approved"):
        state = "needs_review"  # org-wide live memory needs a lead's approval: keep the corpus importable
    rec = {"memoryId": f"mem-{i:07d}", "type": rng.choice(_TYPES), "statement": text, "scope": scope,
           "evidence": evidence, "state": state, "confidence": round(rng.uniform(0.4, 0.98), 2),
           "reviewState": {"active": "approved", "approved": "approved", "needs_review": "pending",
                           "candidate": "pending", "rejected": "rejected"}.get(state, "none"),
           "origin": rng.choice(["agent", "agent", "human", "system"]),
           "proposedBy": {"type": "agent_workflow", "id": f"wf_{i % 5000:05d}"}, "createdAt": created,
           "tags": tags, "invalidationPolicy": [{"symbolChanged": a}, {"fileChanged": f"src/{module}/{a}.py"}]}
    if state in ("active", "approved"):
        rec["lastValidatedAt"] = created
        rec["reviewAfterDays"] = rng.choice([90, 180])
    return rec


def write_jsonl(n: int, path: Path) -> Path:
    """Write records 0..n-1 to ``path``, one JSON object a line; returns ``path``."""
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps(record(i), separators=(",", ":")) + "\n")
    return path


def code_hash() -> str:
    """A hash of ``src/memtui`` and this file: a cached store is rebuilt when either changes."""
    h = hashlib.sha256()
    for p in sorted((ROOT / "src" / "memtui").rglob("*.py")) + [Path(__file__).resolve()]:
        h.update(str(p.relative_to(ROOT)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def run_import(jsonl: Path, db: Path, *, python: str = sys.executable, pythonpath: str | None = None,
               timeout: float = 1800) -> dict:
    """``memtui import JSONL`` into a fresh store ``db`` as a child process (after ``memtui init``, so
    migrations are not timed). Returns ``import_seconds`` (wall), ``import_peak_rss_mb`` (the child's
    ``ru_maxrss``) and ``output`` (its last line). Raises RuntimeError when the import fails."""
    env = dict(os.environ, MEMTUI_ACTOR="bench", MEMTUI_DB=str(db))
    env.pop("MEMTUI_NOW", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    cli = [python, "-c", "import sys; from memtui.cli import main; sys.argv[0] = 'memtui'; main()"]
    subprocess.run(cli + ["init"], env=env, check=True, capture_output=True)
    size = jsonl.stat().st_size
    args = cli + ["import", str(jsonl)] + (["--max-file-bytes", str(size + 1)] if size > 50_000_000 else [])
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        except BaseException:
            proc.kill()
            raise
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise RuntimeError(f"memtui import exited {proc.returncode}: {text[-2000:]}")
    return {"import_seconds": round(seconds, 2), "import_cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "import_peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "load_avg_1m": round(os.getloadavg()[0], 2),
            "output": text.splitlines()[0] if text else ""}


_SPLIT_SCRIPT = """
import json, os, resource, sys, time
from memtui.cli.launch import acting
from memtui.importers.formats import import_paths
from memtui.importers.limits import ImportLimits, use_limits
from memtui.store.engine import open_store
engine = open_store(None)
actor = acting(engine, "bench", None)
s0, c0, t0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
with use_limits(ImportLimits.from_env()):
    report = import_paths(engine, [sys.argv[1]], actor)
wall = time.perf_counter() - t0
s1, c1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = lambda a, b: round(b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime, 2)
print(json.dumps({"seconds": round(wall, 2), "writer_cpu_seconds": cpu(s0, s1), "reader_cpu_seconds": cpu(c0, c1),
                  "imported": len(report.imported)}))
"""


def split_cpu(n: int, workdir: Path) -> dict:
    """The import of records 0..n-1 run in one interpreter (not through the CLI), its CPU time split
    between the writing process (``writer_cpu_seconds``: checks, seals, inserts, commit) and the
    forked reader (``reader_cpu_seconds``: reading, validation, screening): on two free cores the wall
    time of a large import is about the larger of the two. Also ``seconds`` (wall), ``n``, ``load_avg_1m``."""
    jsonl = write_jsonl(n, workdir / f"split-{n}.jsonl")
    db = workdir / f"split-{n}.db"
    env = dict(os.environ, MEMTUI_ACTOR="bench", MEMTUI_DB=str(db))
    env.pop("MEMTUI_NOW", None)
    cli = [sys.executable, "-c", "import sys; from memtui.cli import main; sys.argv[0] = 'memtui'; main()"]
    subprocess.run(cli + ["init"], env=env, check=True, capture_output=True)
    out = subprocess.run([sys.executable, "-c", _SPLIT_SCRIPT, str(jsonl)], env=env, check=True,
                         capture_output=True, text=True).stdout
    figures = json.loads(out.strip().splitlines()[-1])
    return {"n": n, **figures, "load_avg_1m": round(os.getloadavg()[0], 2)}


def _count(db: Path) -> int:
    """Rows in ``memory``; the write-ahead log is folded into the file first, so copying the file copies all."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return conn.execute("select count(*) from memory").fetchone()[0]
    finally:
        conn.close()


def build_store(n: int, db_path: Path | str, *, rebuild: bool = False) -> dict:
    """A SQLite store of ``n`` imported memories at ``db_path`` (copied from the cache, built on a miss).

    Returns ``n``, ``import_seconds``, ``import_peak_rss_mb`` (of the import that built the cached
    store), ``memories`` (rows), ``cached`` (whether it was copied), ``jsonl`` (the imported file) and
    ``db`` (``db_path``). Raises RuntimeError when the import fails."""
    key = CACHE / f"n{n}-{code_hash()}"
    meta_path, store = key / "figures.json", key / "store.db"
    cached = meta_path.exists() and store.exists() and not rebuild
    if not cached:
        for stale in CACHE.glob(f"n{n}-*"):  # stores of older code: about 0.5 GB each at 100,000
            shutil.rmtree(stale, ignore_errors=True)
        key.mkdir(parents=True)
        jsonl = write_jsonl(n, key / "records.jsonl")
        figures = run_import(jsonl, store)
        figures.update(n=n, memories=_count(store), jsonl=str(jsonl))
        meta_path.write_text(json.dumps(figures, indent=1), encoding="utf-8")
    figures = json.loads(meta_path.read_text(encoding="utf-8"))
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    shutil.copyfile(store, db_path)
    return {**figures, "cached": cached, "db": str(db_path)}


def baseline(n: int, workdir: Path) -> dict:
    """The import of ``n`` records by the code at :data:`BASELINE_COMMIT` (``git archive`` of its
    ``src/`` into ``workdir``, run with this interpreter's packages)."""
    src = workdir / "baseline"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASELINE_COMMIT, "src"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    jsonl = write_jsonl(n, workdir / f"baseline-{n}.jsonl")
    figures = run_import(jsonl, workdir / "baseline.db", pythonpath=str(src / "src"))
    figures.update(n=n, memories=_count(workdir / "baseline.db"), commit=BASELINE_COMMIT)
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--baseline-n", type=int, default=10_000,
                    help="records the pre-change import is timed on (it is quadratic: 100,000 takes minutes)")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--rebuild", action="store_true", help="ignore the cached store")
    ap.add_argument("--split-n", type=int, default=20_000,
                    help="records of the in-process run that splits CPU between writer and reader (0: none)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="store100k-") as tmp:
        work = Path(tmp)
        result = build_store(args.n, work / "store.db", rebuild=args.rebuild)
        out = {k: result[k] for k in ("n", "import_seconds", "import_cpu_seconds", "import_peak_rss_mb", "memories",
                                      "cached", "load_avg_1m")}
        out["jsonl_mb"] = round(Path(result["jsonl"]).stat().st_size / 1e6, 1)
        out["output"] = result["output"]
        out["targets"] = {"import_seconds": 15, "import_peak_rss_mb": 400}
        if args.split_n:
            out["split"] = split_cpu(args.split_n, work)
        if not args.no_baseline:
            print(f"baseline: importing {args.baseline_n} records with {BASELINE_COMMIT}...", file=sys.stderr)
            out["baseline"] = {"run": baseline(args.baseline_n, work), "measured_100k": BASELINE_100K}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
