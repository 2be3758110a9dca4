"""Revalidation benchmark (issue 3, DESIGN.md "Scale targets").

Builds once, and caches under ``bench/.cache/revalidate/``:

* a deterministic git repository (default 2,000 commits, about 500 Java files) written with
  ``git fast-import``: commits edit method bodies, insert and remove statements and methods
  (shifting lines), swap methods (moved blocks), rename methods, and now and then add, rename
  and delete files;
* a migrated SQLite store (``open_store``) of 10,000 memories whose evidence (file spans,
  whole files, symbols, call edges, a few human sources and unknown commits) is anchored at
  commits spread over the history, bulk-inserted with SQLAlchemy core.

Then it copies the store, runs the real job (``run_revalidation``) on the copy, times it, times
a naive per-memory approach (a few ``git`` processes per evidence row) on a 500-memory subset,
and prints ONE JSON object on stdout. Progress goes to stderr.

    .venv/bin/python bench/revalidate.py [--memories N] [--commits N] [--files N] [--rebuild]
"""

from __future__ import annotations

import argparse
import bisect
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
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CACHE = HERE / ".cache" / "revalidate"
GEN_VERSION = 1  # bump when the generator changes: cached repositories and stores are rebuilt

try:  # a fresh clone without an editable install still finds the package
    import memtui  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(ROOT / "src"))


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------
# Repository model: Java-ish classes rendered to lines; every change is recorded per path.
# ------------------------------------------------------------------------------------------------

MODULES = ["orders", "billing", "catalog", "customers", "shipping", "pricing", "inventory", "payments",
           "rules", "reports", "auth", "search", "notify", "audit", "tax", "returns", "loyalty",
           "accounts", "checkout", "fulfilment"]
NOUNS = ["Order", "Invoice", "Customer", "Payment", "Item", "Price", "Tax", "Rule", "Shipment",
         "Account", "Cart", "Discount", "Ledger", "Refund", "Coupon", "Stock", "Report", "Token",
         "Address", "Session", "Quote", "Batch", "Policy", "Voucher", "Carrier"]
ROLES = ["Service", "Validator", "Repository", "Controller", "Mapper", "Registry", "Factory",
         "Handler", "Resolver", "Calculator", "Client", "Processor", "Scheduler", "Gateway",
         "Builder", "Policy", "Adapter", "Listener", "Store", "Engine"]
VERBS = ["validate", "load", "save", "compute", "resolve", "apply", "merge", "check", "build",
         "render", "parse", "format", "normalize", "reserve", "release", "refund", "charge", "find",
         "update", "publish", "schedule", "cancel", "approve", "score", "split", "round"]


class Method:
    __slots__ = ("name", "body", "doc")

    def __init__(self, name: str, body: list[str], doc: bool) -> None:
        self.name, self.body, self.doc = name, body, doc

    def copy(self) -> "Method":
        return Method(self.name, list(self.body), self.doc)


class JFile:
    """One Java class: package, imports, collaborator fields, methods (bodies are statements,
    a statement may span several lines)."""

    def __init__(self, module: str, cls: str, collabs: list[str], methods: list[Method]) -> None:
        self.module, self.cls, self.collabs, self.methods = module, cls, collabs, methods
        self.header_comments: list[str] = []

    def copy(self) -> "JFile":
        f = JFile(self.module, self.cls, list(self.collabs), [m.copy() for m in self.methods])
        f.header_comments = list(self.header_comments)
        return f

    @property
    def path(self) -> str:
        return f"src/main/java/com/acme/{self.module}/{self.cls}.java"

    def render(self) -> tuple[list[str], dict[str, tuple[int, int]], list[tuple[int, str, str]]]:
        """(lines, method -> (first, last) declaration lines, [(line, caller, target) calls])."""
        out = [f"package com.acme.{self.module};\n", "\n", "import java.util.List;\n",
               "import java.util.Map;\n"]
        out += [f"import com.acme.shared.{c};\n" for c in sorted(set(self.collabs))]
        out.append("\n")
        out += self.header_comments
        out += ["/**\n", f" * {self.cls}: part of the {self.module} module.\n", " */\n",
                f"public class {self.cls} {{\n", "\n"]
        for i, c in enumerate(self.collabs):
            out.append(f"    private final {c} {_field(c, i)};\n")
        out.append("\n")
        spans: dict[str, tuple[int, int]] = {}
        calls: list[tuple[int, str, str]] = []
        for m in self.methods:
            if m.doc:
                out += ["    /**\n", f"     * {m.name.capitalize()} the value.\n", "     */\n"]
            start = len(out) + 1
            out.append(f"    public int {m.name}(int value) {{\n")
            out.append("        int x = value;\n")
            for stmt in m.body:
                for line in stmt.split("\n"):
                    out.append("        " + line + "\n")
                    if "(x" in line and "." in line and "this." in line:
                        # this.<field>.<method>(x ...) -> target <Collab>.<method>
                        fld, meth = line.split("this.", 1)[1].split("(", 1)[0].split(".", 1)
                        calls.append((len(out), f"{self.cls}.{m.name}", f"{_collab_of(self, fld)}.{meth}"))
            out.append("        return x;\n")
            out.append("    }\n")
            if m.name not in spans:
                spans[m.name] = (start, len(out))
            out.append("\n")
        out.append("}\n")
        return out, spans, calls


def _field(cls: str, i: int) -> str:
    return cls[0].lower() + cls[1:] + (str(i) if i else "")


def _collab_of(f: JFile, fld: str) -> str:
    for i, c in enumerate(f.collabs):
        if _field(c, i) == fld:
            return c
    return "Object"


class Model:
    """The simulated history: generates the fast-import stream and remembers every version."""

    def __init__(self, n_commits: int, n_files: int, seed: int = 20260101) -> None:
        self.R = random.Random(seed)
        self.n_commits, self.n_files = n_commits, n_files
        self.files: dict[str, JFile] = {}
        self.weights: dict[str, float] = {}
        # path -> list of (commit index, lines or None when deleted, spans, calls)
        self.history: dict[str, list[tuple[int, tuple[str, ...] | None, dict, list]]] = {}
        self._index: dict[str, list[int]] = {}
        self.class_counter = 0
        self.used_names: set[str] = set()
        self.stats = {"modify": 0, "add": 0, "rename": 0, "delete": 0}

    # -- generation helpers --------------------------------------------------------------------

    def _class_name(self) -> str:
        R = self.R
        while True:
            name = R.choice(NOUNS) + R.choice(ROLES)
            if name in self.used_names:
                name += str(self.class_counter)
            self.class_counter += 1
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def _stmt(self, f: JFile) -> str:
        R = self.R
        r = R.random()
        if r < 0.45 and f.collabs:
            i = R.randrange(len(f.collabs))
            return f"x = this.{_field(f.collabs[i], i)}.{R.choice(VERBS)}{R.choice(NOUNS)}(x, {R.randint(0, 99)});"
        if r < 0.7:
            return f"x = x {R.choice('+-*')} {R.randint(1, 97)};"
        if r < 0.85:
            return (f"if (x > {R.randint(10, 999)}) {{\n    x = x % {R.randint(2, 50)};\n}}")
        return f"// {R.choice(['keep', 'note', 'todo', 'see'])}: {R.choice(VERBS)} {R.choice(NOUNS).lower()} {R.randint(1, 9999)}"

    def _method(self, f: JFile) -> Method:
        R = self.R
        taken = {m.name for m in f.methods}
        while True:
            name = R.choice(VERBS) + R.choice(NOUNS)
            if name not in taken:
                break
        return Method(name, [self._stmt(f) for _ in range(R.randint(2, 8))], R.random() < 0.5)

    def _new_file(self) -> JFile:
        R = self.R
        cls = self._class_name()
        collabs = [R.choice(NOUNS) + R.choice(ROLES) for _ in range(R.randint(1, 4))]
        f = JFile(R.choice(MODULES), cls, collabs, [])
        for _ in range(R.randint(5, 13)):
            f.methods.append(self._method(f))
        return f

    def _mutate(self, f: JFile, idx: int) -> None:
        R = self.R
        op = R.random()
        if not f.methods:
            f.methods.append(self._method(f))
            return
        m = R.choice(f.methods)
        if op < 0.30:  # edit one statement (touches that method)
            k = R.randrange(len(m.body))
            m.body[k] = self._stmt(f)
        elif op < 0.50:  # insert a statement (touches the method, shifts what follows)
            m.body.insert(R.randint(0, len(m.body)), self._stmt(f))
        elif op < 0.60:  # remove a statement (may remove a call edge)
            if len(m.body) > 1:
                del m.body[R.randrange(len(m.body))]
        elif op < 0.72:  # add a method (shifts the methods after it)
            f.methods.insert(R.randint(0, len(f.methods)), self._method(f))
        elif op < 0.80:  # header comment / import churn: shifts the whole file
            if f.header_comments and R.random() < 0.4:
                f.header_comments.pop()
            else:
                f.header_comments.append(f"// change {idx}: {R.choice(VERBS)} {R.choice(NOUNS).lower()}\n")
        elif op < 0.86:  # swap two adjacent methods (moved blocks)
            if len(f.methods) > 1:
                k = R.randrange(len(f.methods) - 1)
                f.methods[k], f.methods[k + 1] = f.methods[k + 1], f.methods[k]
        elif op < 0.91:  # delete a method (referenced symbol deleted)
            if len(f.methods) > 2:
                f.methods.remove(m)
        elif op < 0.95:  # rename a method
            m.name = self._method(f).name
        else:  # toggle a javadoc (a line range directly above the method)
            m.doc = not m.doc

    def _pick(self) -> str:
        paths = sorted(self.files)
        return self.R.choices(paths, weights=[self.weights[p] for p in paths])[0]

    def _record(self, idx: int, f: JFile | None, path: str) -> bytes:
        if f is None:
            self.history.setdefault(path, []).append((idx, None, {}, []))
            return b"D " + path.encode() + b"\n"
        lines, spans, calls = f.render()
        self.history.setdefault(path, []).append((idx, tuple(lines), spans, calls))
        data = "".join(lines).encode()
        return b"M 100644 inline " + path.encode() + b"\ndata %d\n" % len(data) + data + b"\n"

    # -- the stream ----------------------------------------------------------------------------

    def build(self) -> bytes:
        R = self.R
        # files added over the history, so start with fewer and end near n_files
        adds, dels = int(self.n_commits * 0.012), int(self.n_commits * 0.004)
        initial = max(10, self.n_files - adds + dels)
        chunks: list[bytes] = []
        cmds = []
        for _ in range(initial):
            f = self._new_file()
            self.files[f.path] = f
            self.weights[f.path] = 1.0 / (R.random() * 0.98 + 0.02)  # a few hot files
            cmds.append(self._record(0, f, f.path))
        chunks.append(self._commit(0, cmds, "Initial import"))
        for idx in range(1, self.n_commits):
            cmds = []
            r = R.random()
            if r < 0.004 and len(self.files) > 20:
                p = self._pick()
                del self.files[p]
                cmds.append(self._record(idx, None, p))
                self.stats["delete"] += 1
                msg = f"Remove {p.rsplit('/', 1)[1]}"
            elif r < 0.009:
                p = self._pick()
                f = self.files.pop(p)
                w = self.weights.pop(p)
                f.module = R.choice([m for m in MODULES if m != f.module])
                if R.random() < 0.5:
                    self._mutate(f, idx)
                cmds.append(self._record(idx, None, p))
                self.files[f.path] = f
                self.weights[f.path] = w
                cmds.append(self._record(idx, f, f.path))
                self.stats["rename"] += 1
                msg = f"Move {f.cls} to {f.module}"
            elif r < 0.021:
                f = self._new_file()
                self.files[f.path] = f
                self.weights[f.path] = 1.0 / (R.random() * 0.98 + 0.02)
                cmds.append(self._record(idx, f, f.path))
                self.stats["add"] += 1
                msg = f"Add {f.cls}"
            else:
                n = 1 + min(5, int(R.expovariate(0.8)))
                touched = sorted({self._pick() for _ in range(n)})
                for p in touched:
                    for _ in range(1 + int(R.expovariate(1.5))):
                        self._mutate(self.files[p], idx)
                    cmds.append(self._record(idx, self.files[p], p))
                self.stats["modify"] += 1
                msg = f"Change {', '.join(p.rsplit('/', 1)[1] for p in touched)}"
            chunks.append(self._commit(idx, cmds, msg))
        return b"".join(chunks)

    @staticmethod
    def _commit(idx: int, cmds: list[bytes], msg: str) -> bytes:
        m = f"{msg} (#{idx})\n".encode()
        ts = 1_600_000_000 + idx * 3_600
        head = (b"commit refs/heads/main\nmark :%d\n" % (idx + 1)
                + b"author Bench Dev <dev@example.com> %d +0000\n" % ts
                + b"committer Bench Dev <dev@example.com> %d +0000\n" % ts
                + b"data %d\n" % len(m) + m)
        if idx > 0:
            head += b"from :%d\n" % idx
        return head + b"".join(cmds) + b"\n"

    def at(self, path: str, idx: int):
        """(lines, spans, calls) of ``path`` at commit ``idx``, or None."""
        h = self.history.get(path)
        if not h:
            return None
        idxs = self._index.get(path)
        if idxs is None or len(idxs) != len(h):
            idxs = self._index[path] = [c for c, *_ in h]
        i = bisect.bisect_right(idxs, idx) - 1
        if i < 0 or h[i][1] is None:
            return None
        return h[i][1:]


# ------------------------------------------------------------------------------------------------
# Building and caching
# ------------------------------------------------------------------------------------------------

def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True,
                          check=True).stdout


def _repo_path(commits: int, files: int) -> Path:
    return CACHE / f"repo-c{commits}-f{files}-v{GEN_VERSION}"


def _store_path(commits: int, files: int, memories: int) -> Path:
    return CACHE / f"store-c{commits}-f{files}-m{memories}-v{GEN_VERSION}.db"


def cached_inputs(commits: int, files: int, memories: int):
    """(repo, shas, store, store meta) when both are cached and belong together, else None."""
    repo, db = _repo_path(commits, files), _store_path(commits, files, memories)
    try:
        repo_meta = json.loads(repo.with_suffix(".json").read_text())
        meta = json.loads(db.with_suffix(".json").read_text())
    except (OSError, ValueError):
        return None
    if not (repo / ".git").is_dir() or not db.exists() or meta.get("head") != repo_meta["shas"][-1]:
        return None
    return repo, repo_meta["shas"], db, meta


def build_repo(commits: int, files: int, rebuild: bool) -> tuple[Path, Model, list[str]]:
    """The cached repository (built when missing), the model of its history and its commit shas."""
    repo = _repo_path(commits, files)
    meta_path = repo.with_suffix(".json")
    t = time.perf_counter()
    model = Model(commits, files)
    stream = model.build()
    digest = hashlib.sha256(stream).hexdigest()
    log(f"history simulated in {time.perf_counter() - t:.1f}s ({model.stats})")
    if not rebuild and meta_path.exists() and repo.is_dir():
        meta = json.loads(meta_path.read_text())
        if meta.get("stream") == digest:
            return repo, model, meta["shas"]
        log("cached repository does not match the generator: rebuilding")
    t = time.perf_counter()
    shutil.rmtree(repo, ignore_errors=True)
    meta_path.unlink(missing_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="repo-", dir=CACHE))
    env_quiet = ["-c", "init.defaultBranch=main"]
    subprocess.run(["git", *env_quiet, "init", "-q", str(tmp)], check=True)
    _git(tmp, "fast-import", "--quiet", "--done", stdin=stream + b"done\n")
    _git(tmp, "-c", "advice.detachedHead=false", "checkout", "-q", "-f", "main")
    shas = _git(tmp, "rev-list", "--reverse", "main").decode().split()
    assert len(shas) == commits, (len(shas), commits)
    tmp.rename(repo)
    meta_path.write_text(json.dumps({"stream": digest, "shas": shas}))
    log(f"repository built in {time.perf_counter() - t:.1f}s: {repo}")
    return repo, model, shas


def build_store(repo: Path, model: Model, shas: list[str], memories: int, rebuild: bool) -> tuple[Path, dict]:
    """The cached store of ``memories`` memories (built when missing) and its description."""
    commits = len(shas)
    db = _store_path(commits, model.n_files, memories)
    meta_path = db.with_suffix(".json")
    if not rebuild and db.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        if meta.get("head") == shas[-1]:
            return db, meta
    t = time.perf_counter()
    for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm"), meta_path):
        p.unlink(missing_ok=True)

    from memtui.store.engine import open_store
    from memtui.store.models import Evidence, Memory, Repository

    R = random.Random(4242)
    paths = sorted(model.history)
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    mem_rows, ev_rows = [], []
    ev_id = 0
    kinds = {"file_span": 0, "file": 0, "symbol": 0, "call_edge": 0, "human": 0, "unknown_commit": 0}
    for n in range(memories):
        mid = f"mem-{n:05d}"
        # half of the memories anywhere in the history, half from its last quarter
        idx = R.randrange(commits) if R.random() < 0.5 else R.randrange(commits * 3 // 4, commits)
        chosen: list[str] = []
        while len(chosen) < (1 if R.random() < 0.7 else 2):
            p = R.choice(paths)
            if p not in chosen and model.at(p, idx) is not None:
                chosen.append(p)
        evs: list[dict] = []
        policy: list[dict] = []
        n_ev = R.choices([1, 2, 3], weights=[5, 3, 2])[0]
        unknown = R.random() < 0.005
        sha = hashlib.sha1(f"gone-{n}".encode()).hexdigest() if unknown else shas[idx]
        if unknown:
            kinds["unknown_commit"] += 1
        for k in range(n_ev):
            path = chosen[k % len(chosen)]
            lines, spans, calls = model.at(path, idx)
            r = R.random()
            ev = {"type": "file_span", "path": path, "commit_sha": sha}
            if r < 0.25 and spans:
                name = R.choice(sorted(spans))
                s, e = spans[name]
                cls = path.rsplit("/", 1)[1][:-5]
                ev.update(type="symbol", symbol=f"{cls}.{name}", line_start=s, line_end=e)
                if R.random() < 0.15:
                    policy.append({"symbolChanged": f"{cls}.{name}"})
            elif r < 0.37 and calls:
                line, caller, target = R.choice(calls)
                ev.update(type="call_edge", symbol=caller, target=target, line_start=line, line_end=line)
                if R.random() < 0.15:
                    policy.append({"edgeRemoved": f"{caller} CALLS {target}"})
            elif r < 0.40:
                ev["type"] = "file"  # whole-file evidence (recorded as a file_span without lines)
            else:
                s = R.randint(1, len(lines))
                e = min(len(lines), s + R.choice([0, 0, 1, 2, 3, 5, 8, 12, 20]))
                ev.update(line_start=s, line_end=e)
                if R.random() < 0.05:
                    policy.append({"fileChanged": path})
            kinds[ev["type"]] += 1
            if ev["type"] == "file":
                ev["type"] = "file_span"
            if ev.get("line_start") is not None:
                seg = lines[ev["line_start"] - 1:ev["line_end"]]
                ev["span_hash"] = "sha256:" + hashlib.sha256("".join(seg).encode()).hexdigest()
                ev["excerpt"] = "".join(seg)[:400]
            evs.append(ev)
        if R.random() < 0.03:
            evs.append({"type": "human", "ref": f"review comment by dev{R.randint(1, 40)}"})
            kinds["human"] += 1
        state = R.choices(["active", "approved", "candidate", "needs_review"], weights=[80, 7, 8, 5])[0]
        created = t0 + timedelta(minutes=n)
        mem_rows.append(dict(
            memory_id=mid, logical_memory_id=mid, type=R.choice(["convention", "code_fact", "pitfall", "procedure"]),
            statement=f"{evs[0].get('symbol') or evs[0].get('path', 'the module')} must be used as documented (#{n}).",
            tenant_id="default", repository_id="bench", module_path=chosen[0].rsplit("/", 1)[0],
            applies_to=[chosen[0].rsplit("/", 1)[0] + "/**"], does_not_apply_to=[], state=state,
            confidence=round(0.4 + R.random() * 0.6, 2), review_state="approved" if state in ("active", "approved") else "pending",
            conflict_state="none", impact="normal", origin="agent", requires_human_review=False,
            source_action_ids=[], tags=["bench"], invalidation_policy=policy, created_at=created, version=1))
        for k, ev in enumerate(evs):
            ev_id += 1
            ev_rows.append(dict(evidence_id=ev_id, memory_id=mid, ordinal=k, type=ev["type"],
                                repository_id="bench", path=ev.get("path"), commit_sha=ev.get("commit_sha"),
                                line_start=ev.get("line_start"), line_end=ev.get("line_end"),
                                symbol=ev.get("symbol"), target=ev.get("target"), ref=ev.get("ref"),
                                span_hash=ev.get("span_hash"), excerpt=ev.get("excerpt"), status="unchecked"))
    engine = open_store(str(db))
    with engine.begin() as conn:
        conn.execute(Repository.__table__.insert(), [dict(repository_id="bench", tenant_id="default",
                                                          checkout_path=str(repo), added_at=t0)])
        for i in range(0, len(mem_rows), 2000):
            conn.execute(Memory.__table__.insert(), mem_rows[i:i + 2000])
        for i in range(0, len(ev_rows), 4000):
            conn.execute(Evidence.__table__.insert(), ev_rows[i:i + 4000])
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    meta = {"head": shas[-1], "memories": memories, "evidence": len(ev_rows),
            "distinct_commits": len({e["commit_sha"] for e in ev_rows if e["commit_sha"]}),
            "evidence_kinds": kinds}
    meta_path.write_text(json.dumps(meta))
    log(f"store built in {time.perf_counter() - t:.1f}s: {db} ({len(ev_rows)} evidence rows)")
    return db, meta


def fresh_copy(db: Path, dest_dir: Path) -> Path:
    """A copy of the cached store to run the job on (the cached one is never written)."""
    dest = dest_dir / "run.db"
    for p in (dest, Path(f"{dest}-wal"), Path(f"{dest}-shm")):
        p.unlink(missing_ok=True)
    src = sqlite3.connect(str(db))
    out = sqlite3.connect(str(dest))
    src.backup(out)  # consistent even if a WAL file is left over
    out.close()
    src.close()
    return dest


# ------------------------------------------------------------------------------------------------
# The real job
# ------------------------------------------------------------------------------------------------

def run_job(db: Path, repo: Path, profile: bool) -> dict:
    from memtui.maintenance import revalidation_job
    from memtui.store.engine import open_store

    engine = open_store(str(db))
    # time the engine call and the per-memory writes inside the real job (same functions, wrapped)
    phases = {"revalidate": 0.0, "transition": 0.0, "_result_values": 0.0}
    real = {name: getattr(revalidation_job, name) for name in phases}

    def timed(name):
        fn = real[name]

        def wrapper(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                phases[name] += time.perf_counter() - t
        return wrapper

    for name in phases:
        setattr(revalidation_job, name, timed(name))
    now = datetime(2026, 12, 1, tzinfo=timezone.utc)
    prof = None
    try:
        if profile:
            import cProfile
            prof = cProfile.Profile()
            prof.enable()
        t = time.perf_counter()
        result = revalidation_job.run_revalidation(engine, "bench", repo, now)
        seconds = time.perf_counter() - t
        if prof is not None:
            prof.disable()
    finally:
        for name, fn in real.items():
            setattr(revalidation_job, name, fn)
    if prof is not None:
        import io
        import pstats
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(35)
        buf.write("\n--- by own time ---\n")
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(25)
        print(buf.getvalue(), file=sys.stderr)
    with engine.connect() as conn:
        statuses = dict(conn.exec_driver_sql(
            "SELECT memory_id, status FROM memory_revalidation").fetchall())
        reasons = dict(conn.exec_driver_sql(
            "SELECT reason_code, count(*) FROM evidence GROUP BY reason_code ORDER BY 2 DESC").fetchall())
    engine.dispose()
    return {"seconds": seconds, "engine_seconds": phases["revalidate"], "result": result, "statuses": statuses,
            "reasons": reasons,
            "phases": {"engine": round(phases["revalidate"], 3),
                       "state_transitions": round(phases["transition"], 3),
                       "revalidation_rows": round(phases["_result_values"], 3),
                       "load_evidence_updates_commit": round(seconds - sum(phases.values()), 3)}}


# ------------------------------------------------------------------------------------------------
# The naive baseline: every memory on its own, a few git processes per evidence row
# ------------------------------------------------------------------------------------------------

class Naive:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.processes = 0

    def git(self, *args: str) -> tuple[int, bytes]:
        self.processes += 1
        p = subprocess.run(["git", "-C", str(self.repo), *args], capture_output=True)
        return p.returncode, p.stdout

    def show(self, rev: str, path: str) -> str | None:
        rc, out = self.git("show", f"{rev}:{path}")
        return out.decode("utf-8", "surrogateescape") if rc == 0 else None

    def check(self, ev: dict, symbols) -> tuple[str, dict]:
        """(status, texts) of one evidence row: valid | changed | deleted | unverifiable | unchecked."""
        from memtui.domain.spans import find_block, map_span, parse_hunk_header, split_lines

        path, sha = ev["path"], ev["commit_sha"]
        if not path or not sha:
            return "unchecked", {}
        old = self.show(sha, path)  # also tells whether the commit exists
        if old is None:
            return "unverifiable", {}
        rc, patch = self.git("diff", "-U0", "-M", "--no-color", sha, "HEAD", "--", path)
        new_path = path
        if b"\ndeleted file mode" in patch:
            rc, ns = self.git("diff", "-M", "--name-status", "--diff-filter=R", sha, "HEAD")
            renamed = None
            for line in ns.decode().splitlines():
                parts = line.split("\t")
                if len(parts) == 3 and parts[1] == path:
                    renamed = parts[2]
            if renamed is None:
                return "deleted", {"gone": True}
            new_path = renamed
            rc, patch = self.git("diff", "-U0", "-M", "--no-color", sha, "HEAD", "--", path, new_path)
        hunks = [parse_hunk_header(line) for line in patch.split(b"\n") if line.startswith(b"@@ -")]
        new = self.show("HEAD", new_path)
        if new is None:
            return "unverifiable", {}
        texts = {"old": old, "new": new, "new_path": new_path}
        old_lines, new_lines = split_lines(old), split_lines(new)
        s, e = ev["line_start"], ev["line_end"]
        if s is not None:
            if e > len(old_lines):
                return "changed", texts
            seg = old_lines[s - 1:e]
            if ev["span_hash"] and "sha256:" + hashlib.sha256("".join(seg).encode()).hexdigest() != ev["span_hash"]:
                return "changed", texts
        if ev["type"] == "symbol" and ev["symbol"]:
            now = symbols.find_symbol(new, new_path, ev["symbol"])
            if now is None:
                return "deleted", texts
            before = symbols.find_symbol(old, path, ev["symbol"])
            before_text = before.text if before else "".join(old_lines[s - 1:e])
            same = [x.rstrip("\n") for x in split_lines(before_text)] == [x.rstrip("\n") for x in split_lines(now.text)]
            return ("valid" if same else "changed"), texts
        if ev["type"] == "call_edge" and ev["symbol"] and ev["target"]:
            if symbols.find_symbol(new, new_path, ev["symbol"]) is None:
                return "deleted", texts
            method = ev["target"].rsplit(".", 1)[-1]
            sites = symbols.call_sites(new, new_path, ev["symbol"])
            return ("valid" if any(n in (method, ev["target"]) for n, _ in sites) else "changed"), texts
        if s is None:
            return ("valid" if old == new else "changed"), texts
        m = map_span(s, e, hunks)
        if not m.touched:
            same = [x.rstrip("\n") for x in old_lines[s - 1:e]] == [x.rstrip("\n") for x in new_lines[m.start - 1:m.end]]
            return ("valid" if same else "changed"), texts
        return ("valid" if find_block(old_lines[s - 1:e], new_lines) else "changed"), texts

    def memory(self, evs: list[dict], policies: list[dict]) -> str:
        from memtui.sources.symbols import SymbolIndex

        symbols = SymbolIndex()  # per memory: nothing is shared between memories
        results = [(ev, *self.check(ev, symbols)) for ev in evs]
        statuses = [st for _, st, _ in results]
        problems = any(st in ("changed", "deleted", "unverifiable") for st in statuses)
        for policy in policies:
            for key, value in policy.items():
                for ev, st, texts in results:
                    if not texts or st == "unverifiable":
                        continue
                    if key == "fileChanged" and ev["path"] == value:
                        problems |= texts.get("gone", False) or texts["old"] != texts["new"] \
                            or texts["new_path"] != ev["path"]
                    elif key == "symbolChanged" and ev["path"] and "old" in texts:
                        a = symbols.find_symbol(texts["old"], ev["path"], value)
                        if a is not None:
                            b = symbols.find_symbol(texts["new"], texts["new_path"], value)
                            problems |= b is None or a.text.rstrip() != b.text.rstrip()
                    elif key == "edgeRemoved" and "old" in texts:
                        caller, _, target = value.partition(" CALLS ")
                        if symbols.find_symbol(texts["old"], ev["path"], caller) is not None:
                            names = symbols.calls_in(texts["new"], texts["new_path"], caller)
                            method = target.rsplit(".", 1)[-1]
                            problems |= not any(n in (method, target) for n in names)
                    elif key in ("fileChanged", "symbolChanged", "edgeRemoved") and texts.get("gone"):
                        problems |= key != "fileChanged" or ev["path"] == value
        checkable = [st for st in statuses if st != "unchecked"]
        soft = any(ev["type"] in ("human", "replay") for ev in evs) or len(checkable) != len(statuses)
        if checkable and not soft and all(st == "deleted" for st in checkable):
            return "invalidated"
        return "needs_review" if problems else "valid"


def run_naive(db: Path, repo: Path, n: int) -> dict:
    con = sqlite3.connect(str(db))
    ids = [r[0] for r in con.execute(
        "SELECT memory_id FROM memory WHERE repository_id='bench' AND state IN "
        "('candidate','approved','active','needs_review','challenged') ORDER BY memory_id")]
    sample = sorted(random.Random(99).sample(ids, min(n, len(ids))))
    q = ",".join("?" * len(sample))
    evs: dict[str, list[dict]] = {m: [] for m in sample}
    cols = ["memory_id", "type", "path", "commit_sha", "line_start", "line_end", "symbol", "target", "span_hash"]
    for row in con.execute(f"SELECT {', '.join(cols)} FROM evidence WHERE memory_id IN ({q}) "
                           f"ORDER BY memory_id, ordinal", sample):
        evs[row[0]].append(dict(zip(cols, row)))
    policies = {m: json.loads(p) for m, p in con.execute(
        f"SELECT memory_id, invalidation_policy FROM memory WHERE memory_id IN ({q})", sample)}
    con.close()
    naive = Naive(repo)
    out: dict[str, str] = {}
    t = time.perf_counter()
    for mid in sample:
        out[mid] = naive.memory(evs[mid], policies[mid])
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "memories": len(sample), "processes": naive.processes, "statuses": out}


# ------------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=10_000)
    ap.add_argument("--commits", type=int, default=2_000)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--naive", type=int, default=500, help="memories in the naive baseline subset (0: skip)")
    ap.add_argument("--rebuild", action="store_true", help="rebuild the cached repository and store")
    ap.add_argument("--runs", type=int, default=1, help="timed runs, each on a fresh store copy (median reported)")
    ap.add_argument("--rerun", action="store_true",
                    help="also time a second run on the same store copy (steady state: nothing changes)")
    ap.add_argument("--profile", action="store_true", help="cProfile the job; the profile goes to stderr")
    args = ap.parse_args()

    CACHE.mkdir(parents=True, exist_ok=True)
    t_build = time.perf_counter()
    cached = None if args.rebuild else cached_inputs(args.commits, args.files, args.memories)
    if cached is not None:
        repo, shas, db, meta = cached
        log(f"using cached repository {repo.name} and store {db.name}")
    else:
        repo, model, shas = build_repo(args.commits, args.files, args.rebuild)
        db, meta = build_store(repo, model, shas, args.memories, args.rebuild)
        del model
    setup_seconds = time.perf_counter() - t_build
    head_files = len(_git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines())

    work = Path(tempfile.mkdtemp(prefix="run-", dir=CACHE))
    try:
        log(f"running run_revalidation on {args.memories} memories ({meta['evidence']} evidence rows, "
            f"{meta['distinct_commits']} distinct commits)")
        jobs = []
        for i in range(max(1, args.runs)):
            run_db = fresh_copy(db, work)  # every run starts from the same, never revalidated store
            jobs.append(run_job(run_db, repo, args.profile and i == 0))
            log(f"job: {jobs[-1]['seconds']:.2f}s, phases {jobs[-1]['phases']}, summary {jobs[-1]['result'].summary}")
        job = sorted(jobs, key=lambda j: j["seconds"])[len(jobs) // 2]  # the median run
        res = job["result"]
        rerun = None
        if args.rerun:
            again = run_job(run_db, repo, False)
            rerun = {"seconds": round(again["seconds"], 3), "updated": again["result"].updated}
            log(f"second run: {again['seconds']:.2f}s, updated {again['result'].updated}")
        naive = None
        if args.naive > 0:
            log(f"naive baseline on {args.naive} memories ...")
            naive = run_naive(db, repo, args.naive)
            log(f"naive: {naive['seconds']:.2f}s, {naive['processes']} git processes")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    seconds = job["seconds"]
    memories = res.selected
    out = {
        "memories": memories,
        "evidence": meta["evidence"],
        "commits": len(shas),
        "files_at_head": head_files,
        "distinct_commits": meta["distinct_commits"],
        "seconds": round(seconds, 3),
        "runs_seconds": [round(j["seconds"], 3) for j in jobs],
        "engine_seconds": round(job["engine_seconds"], 3),
        "job_overhead_seconds": round(seconds - job["engine_seconds"], 3),
        "job_phases_seconds": job["phases"],
        "git_processes": res.summary.get("gitProcesses"),
        "memories_per_second": round(memories / seconds, 1) if seconds else None,
        "outcomes": {"kept": res.summary.get("kept"), "needsReview": res.summary.get("needsReview"),
                     "invalidated": res.summary.get("invalidated")},
        "updated": res.updated,
        "evidence_reasons": job["reasons"],
    }
    if naive is not None:
        per = naive["seconds"] / naive["memories"]
        agree = sum(1 for m, s in naive["statuses"].items() if job["statuses"].get(m) == s)
        out.update({
            "naive_memories": naive["memories"],
            "naive_seconds": round(naive["seconds"], 3),
            "naive_git_processes": naive["processes"],
            "naive_seconds_per_memory": round(per, 5),
            "naive_projected_seconds": round(per * memories, 1),
            "speedup_vs_naive": round(per * memories / seconds, 1) if seconds else None,
            "naive_agreement": round(agree / naive["memories"], 4),
        })
    if rerun is not None:
        out["rerun"] = rerun
    out.update({"target_seconds": 10, "meets_target": seconds < 10,
                "setup_seconds": round(setup_seconds, 1), "cpus": os.cpu_count()})
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
