"""Revalidation engine: check evidence against a git checkout and decide per memory.

No database access: the caller passes :class:`EvidenceRef` rows and per-memory invalidation
policies, and gets :class:`EvidenceCheck` rows (one per evidence) and :class:`MemoryVerdict`
rows (one per memory) back, sorted, so the same input gives the same output.

Git work is batched (see :mod:`memtui.sources.gitdiff`): the distinct commits are resolved in
one process, diffed against HEAD once each (name-status for all commits in one process, then
``-U0`` hunks at most once per distinct commit, for the paths evidence needs), and all blob
contents are read by one ``git cat-file --batch``. Nothing is done per memory.

Evidence rules (issue 3):

* a file span no hunk touches is ``valid`` at its current lines (shifted lines are no change);
  a touched span, or one whose recorded ``span_hash`` does not match the text at its commit, is
  ``changed`` (``span_changed`` / ``hash_mismatch``); a touched block found verbatim exactly
  once elsewhere in the new file is ``valid`` at its new lines (``moved``); a deleted file is
  ``deleted`` (``file_deleted``); renamed files are followed (``-M``);
* a symbol missing at HEAD is ``deleted`` (``referenced_symbol_deleted``, severity high); a
  symbol whose text changed is ``changed`` (``symbol_changed``);
* a call edge ``symbol CALLS target`` whose caller no longer invokes the target's method name
  is ``changed`` (``edge_removed``); a deleted caller is ``deleted``;
* a commit the repository does not have is ``unverifiable`` (``commit_unknown``);
* a ``doc`` or ``adr`` reference without a commit (its path, or a ref written as a repository path,
  :func:`doc_reference_path`) is checked for existence at HEAD: ``valid`` (``exists``), else
  ``unverifiable`` (``doc_missing``, issue 21 item 3), so a memory grounded in a document that is
  not there goes to review;
* evidence without a path or a commit (human, ref, replay) is ``unchecked``.

Verdicts: ``invalidate`` (``all_evidence_deleted``) when every piece of evidence is checkable
and ``deleted``, and there is no human or replay evidence; otherwise ``needs_review`` when any
evidence is changed, deleted or unverifiable, or an invalidation policy fires; else ``keep``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from memtui.domain.spans import (SpanMap, diff_hunks, find_block, map_span, span_hash,
                                 split_lines)
from memtui.revalidation.references import check_references, is_example, is_named_reference
from memtui.sources.gitdiff import Blob, CommitDiff, GitError, GitRepo
from memtui.sources.history import History, safe_repo_path
from memtui.sources.symbols import SymbolIndex, SymbolSpan, language_for

__all__ = ["EvidenceRef", "EvidenceCheck", "MemoryVerdict", "RevalidationResult", "revalidate",
           "CHECK_STATUSES", "OUTCOMES", "SEVERITIES", "doc_reference_path"]

CHECK_STATUSES = ("valid", "changed", "deleted", "unverifiable", "unresolvable", "unchecked")
OUTCOMES = ("keep", "needs_review", "invalidate")
SEVERITIES = ("none", "low", "medium", "high")
_RANK = {s: i for i, s in enumerate(SEVERITIES)}
_SOFT_TYPES = {"human", "replay"}
_POLICY_KEYS = ("symbolChanged", "edgeRemoved", "fileChanged", "docSuperseded")


@dataclass(frozen=True)
class EvidenceRef:
    """One piece of evidence to check (the columns of the ``evidence`` table that matter).

    ``type``: file_span | symbol | call_edge | doc | adr | human | replay | ref | ...;
    ``commit_sha``: full sha or unique prefix; ``line_start``/``line_end``: 1-based inclusive;
    ``symbol``: the symbol (for ``call_edge`` the caller); ``target``: the callee of a
    ``call_edge``; ``span_hash``: ``"sha256:<hex>"`` of the lines at the commit.
    """

    evidence_id: Any
    memory_id: str
    type: str
    path: str | None = None
    commit_sha: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    symbol: str | None = None
    target: str | None = None
    span_hash: str | None = None
    ref: str | None = None
    excerpt: str | None = None  # for a symbol defined in many files when written: "defined in N files: ..."


@dataclass
class EvidenceCheck:
    """The result of checking one evidence row against HEAD.

    ``status``: valid | changed | deleted | unverifiable | unresolvable (a named reference that
    did not exist at its anchor commit either) | unchecked. ``current_path`` and
    ``current_line_start``/``current_line_end``: where the evidence is at HEAD (for a touched
    span, the HEAD lines that replaced it; ``None`` when deleted, unknown or unchecked).
    ``current_commit``: the HEAD sha the run checked against.
    ``reason_code``: unchanged | shifted | renamed | moved | span_changed | hash_mismatch |
    file_changed | file_deleted | symbol_changed | referenced_symbol_deleted | edge_removed |
    commit_unknown | path_unknown | symbol_unknown | invalid_span | not_checkable.
    Named references (:mod:`memtui.revalidation.references`) add exists | symbol_relocated |
    symbol_renamed (``renamed_to`` the new name) | path_moved | folder_deleted | glob_unmatched | reference_unresolvable | bad_path | example.
    ``reason``: one sentence naming the file or symbol. ``severity``: none | low | medium | high.
    """

    evidence_id: Any
    memory_id: str
    status: str
    current_path: str | None
    current_line_start: int | None
    current_line_end: int | None
    current_commit: str | None
    reason_code: str
    reason: str
    severity: str
    moved_in: str | None = None  # the commit that moved or deleted a named reference, when known
    renamed_to: str | None = None  # a renamed symbol's new name, written as the line wrote the old one


@dataclass
class MemoryVerdict:
    """The decision for one memory.

    ``outcome``: keep | needs_review | invalidate. ``reasons``: sentences (evidence first, in
    evidence order, then policies in policy order; empty for keep). ``reason_codes``: the
    outcome-defining code first (``all_evidence_deleted`` for invalidate), then the others
    sorted, no repeats. ``severity``: none | low | medium | high. ``current_evidence``: sorted
    ``"<file name>@<short HEAD>"`` of evidence still present at HEAD. A memory whose only
    findings are unresolvable references is kept with severity ``low`` and those findings as
    its reasons (a note for the report, not a review).
    """

    memory_id: str
    outcome: str
    reasons: list[str] = field(default_factory=list)
    reason_codes: list[str] = field(default_factory=list)
    severity: str = "none"
    current_evidence: list[str] = field(default_factory=list)


@dataclass
class RevalidationResult:
    """``checks`` sorted by (memory_id, evidence_id); ``verdicts`` sorted by memory_id;
    ``head``: the HEAD sha checked against; ``stats``: counters (commits, unknown commits,
    blobs read, parses, git processes started by this run); ``unreadable``: git errors met and
    worked around (the evidence they touch is ``unverifiable``)."""

    head: str
    checks: list[EvidenceCheck]
    verdicts: list[MemoryVerdict]
    stats: dict[str, int] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)  # git errors met (objects a clone lacks, ...)


#: Evidence types whose document is checked at HEAD when it has no commit (issue 21, item 3).
DOC_TYPES = ("doc", "adr")


def doc_reference_path(type_: str | None, path: str | None, ref: str | None) -> str | None:
    """The repository path a ``doc``/``adr`` reference names, or None: its ``path``, else a ``ref``
    written as a repository path (``docs/x.md``; not ``ADR-012``, a URL or words). Other types: None."""
    if type_ not in DOC_TYPES:
        return None
    if path:
        return safe_repo_path(path)
    ref = (ref or "").strip()
    if not ref or "://" in ref or any(c.isspace() for c in ref) or ref in ("mention", "example"):
        return None
    if "/" not in ref and "." not in ref:
        return None
    return safe_repo_path(ref)


def _eid_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, int):
        return (0, value)
    return (1, str(value))


def _short(sha: str | None) -> str:
    return (sha or "")[:7]


def _name(path: str | None) -> str:
    return path.rsplit("/", 1)[-1] if path else ""


def _lines_txt(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"lines {start}-{end}"


@dataclass
class _FileState:
    """Where (rev, path) is at HEAD. kind: unchanged | modified | renamed | deleted |
    unknown_commit | added (not at the commit, at HEAD) | absent (at neither)."""

    kind: str
    path: str
    new_path: str | None = None
    old_key: Any = None
    new_key: Any = None
    hunks: tuple | None = None
    binary: bool = False


class _Engine:
    def __init__(self, repo: GitRepo, symbols: SymbolIndex | None) -> None:
        self.repo = repo
        self.symbols = symbols or SymbolIndex()
        self.head = ""
        self.diffs: dict[str, CommitDiff | None] = {}
        self.blobs: dict[Any, Blob | None] = {}
        self._lines: dict[str, list[str]] = {}
        self._hunks: dict[tuple[str, str], tuple] = {}
        self.failures: list[str] = []

    # -- git state ----------------------------------------------------------------------------

    def state(self, rev: str, path: str) -> _FileState:
        diff = self.diffs.get(rev)
        if diff is None:
            return _FileState("unknown_commit", path)
        try:
            fc = diff.change_for(path)
        except KeyError:  # not diffed: the engine asks only for paths it diffed
            return _FileState("unknown_commit", path)
        if fc is None:
            if path in diff.added:
                return _FileState("added", path, path)
            if not diff.exists_at_commit(path):
                return _FileState("absent", path)
            key = (self.head, path)
            return _FileState("unchanged", path, path, key, key, ())
        if fc.status == "D":
            return _FileState("deleted", path, None, fc.old_blob, None)
        kind = "renamed" if fc.new_path != path else "modified"
        return _FileState(kind, path, fc.new_path, fc.old_blob, fc.new_blob, fc.hunks, fc.binary)

    def blob(self, key: Any) -> Blob | None:
        return self.blobs.get(key) if key is not None else None

    def lines(self, blob: Blob) -> list[str]:
        cached = self._lines.get(blob.oid)
        if cached is None:
            cached = self._lines[blob.oid] = split_lines(blob.text)
        return cached

    def hunks(self, st: _FileState, old: Blob, new: Blob):
        if st.hunks is not None and not st.binary:
            return st.hunks
        if old.oid == new.oid:
            return ()
        key = (old.oid, new.oid)
        if key not in self._hunks:
            self._hunks[key] = tuple(diff_hunks(self.lines(old), self.lines(new)))
        return self._hunks[key]

    # -- evidence -----------------------------------------------------------------------------

    def check(self, ev: EvidenceRef) -> EvidenceCheck:
        """Check one evidence row; a doc or ADR newly marked superseded at HEAD is ``changed``
        (``doc_superseded``) even when the cited lines are untouched (issue 3, item 2)."""
        checked = self._check(ev)
        if ev.type in ("doc", "adr") and checked.status == "valid" and ev.path and ev.commit_sha:
            st = self.state(ev.commit_sha, ev.path)
            old, new = self.blob(st.old_key), self.blob(st.new_key)
            if old is not None and new is not None and _superseded(new.text) and not _superseded(old.text):
                checked.status, checked.reason_code, checked.severity = "changed", "doc_superseded", "medium"
                checked.reason = f"{checked.current_path or ev.path} is marked superseded since {_short(ev.commit_sha)}"
        return checked

    def _check(self, ev: EvidenceRef) -> EvidenceCheck:
        def result(status, code, reason, severity, path=None, span=None):
            start, end = span if span else (None, None)
            return EvidenceCheck(ev.evidence_id, ev.memory_id, status, path, start, end, self.head,
                                 code, reason, severity)

        if not ev.path or not ev.commit_sha:
            what = ev.ref or ev.path or ev.type
            return result("unchecked", "not_checkable",
                          f"{ev.type} evidence ({what}) has no file at a commit to check", "none")
        path, c7 = ev.path, _short(ev.commit_sha)
        st = self.state(ev.commit_sha, path)
        if st.kind == "unknown_commit":
            return result("unverifiable", "commit_unknown",
                          f"Commit {c7} of {path} is not in the repository (force-push or "
                          f"shallow clone?)", "medium")
        if st.kind in ("absent", "added"):
            return result("unverifiable", "path_unknown", f"{path} does not exist at commit {c7}",
                          "medium")
        is_symbol = ev.type == "symbol" and ev.symbol and language_for(path)
        is_edge = ev.type == "call_edge" and ev.symbol and ev.target and language_for(path)
        if st.kind == "deleted":
            if is_symbol or is_edge:
                sym = ev.symbol
                return result("deleted", "referenced_symbol_deleted",
                              f"Referenced symbol {sym} was deleted: {path} no longer exists "
                              f"(since {c7})", "high")
            return result("deleted", "file_deleted", f"{path} was deleted since {c7}", "high")
        old, new = self.blob(st.old_key), self.blob(st.new_key)
        if old is None or new is None:
            return result("unverifiable", "path_unknown",
                          f"{path} cannot be read at commit {c7} or at HEAD", "medium")
        new_path = st.new_path or path
        renamed = f" (renamed to {new_path})" if new_path != path else ""

        span: tuple[int, int] | None = None
        if ev.line_start is not None:
            s, e = ev.line_start, ev.line_end if ev.line_end is not None else ev.line_start
            if s < 1 or e < s:
                return result("unverifiable", "invalid_span",
                              f"Evidence span [{s}, {e}] of {path} is not a valid line range",
                              "medium")
            span = (s, e)
        old_lines = self.lines(old)
        if span is not None:
            s, e = span
            if e > len(old_lines):
                code = "hash_mismatch" if ev.span_hash else "invalid_span"
                return result("changed", code, f"{path} has only {len(old_lines)} lines at {c7}; "
                              f"recorded {_lines_txt(s, e)} do not exist", "medium",
                              new_path)
            if ev.span_hash and not _hash_ok(ev.span_hash, old_lines[s - 1:e]):
                return result("changed", "hash_mismatch",
                              f"Recorded text of {_lines_txt(s, e)} of {path} does not match "
                              f"commit {c7}", "medium", new_path)
        hunks = self.hunks(st, old, new)
        mapped: SpanMap | None = map_span(span[0], span[1], hunks) if span else None

        if is_symbol:
            return self._check_symbol(ev, st, old, new, new_path, span, mapped, hunks, result)
        if is_edge:
            return self._check_edge(ev, new, new_path, span, mapped, result)
        if span is None:  # evidence on a whole file
            if st.kind == "unchanged" or old.oid == new.oid:
                code = "renamed" if st.kind == "renamed" else "unchanged"
                return result("valid", code, f"{path} unchanged since {c7}{renamed}", "none",
                              new_path)
            return result("changed", "file_changed", f"{path} changed since {c7}{renamed}",
                          "medium", new_path)
        s, e = span
        new_lines = self.lines(new)
        assert mapped is not None
        if not mapped.touched:
            ns, ne = mapped.start, mapped.end
            if ne <= len(new_lines) and _same(old_lines[s - 1:e], new_lines[ns - 1:ne]):
                if new_path != path:
                    code, why = "renamed", f"{path} renamed to {new_path}; {_lines_txt(s, e)} unchanged"
                elif mapped.status == "shifted":
                    code, why = "shifted", f"{_lines_txt(s, e).capitalize()} of {path} unchanged, now {_lines_txt(ns, ne)}"
                else:
                    code, why = "unchanged", f"{_lines_txt(s, e).capitalize()} of {path} unchanged"
                return result("valid", code, why, "none", new_path, (ns, ne))
            return result("changed", "hash_mismatch",
                          f"Text of {_lines_txt(s, e)} of {path} differs at HEAD{renamed}",
                          "medium", new_path, (ns, min(ne, len(new_lines))))
        block = find_block(old_lines[s - 1:e], new_lines)
        if block is not None:
            return result("valid", "moved",
                          f"{_lines_txt(s, e).capitalize()} of {path} moved to "
                          f"{_lines_txt(*block)}{renamed}", "none", new_path, block)
        return result("changed", "span_changed",
                      f"{_lines_txt(s, e).capitalize()} of {path} changed since {c7}{renamed}",
                      "medium", new_path, mapped.region)

    def _find(self, blob: Blob, path: str, name: str) -> SymbolSpan | None:
        return self.symbols.find_symbol(blob.text, path, name, key=blob.oid)

    def _check_symbol(self, ev, st, old, new, new_path, span, mapped, hunks, result) -> EvidenceCheck:
        sym, path, c7 = ev.symbol, ev.path, _short(ev.commit_sha)
        now = self._find(new, new_path, sym)
        if now is None:
            return result("deleted", "referenced_symbol_deleted",
                          f"Referenced symbol {sym} no longer exists in {new_path} (since {c7})",
                          "high")
        here = (now.start_line, now.end_line)
        code = "renamed" if new_path != path else None
        # Fast path (no parse of the old file): the recorded lines, their neighbours untouched,
        # are exactly the symbol's lines at HEAD, so its text is the recorded text.
        if span is not None and mapped is not None and not mapped.touched \
                and here == (mapped.start, mapped.end) \
                and not map_span(max(1, span[0] - 1), span[1] + 1, hunks).touched \
                and _same(self.lines(old)[span[0] - 1:span[1]], split_lines(now.text)):
            return result("valid", code or mapped.status, f"Symbol {sym} unchanged in {new_path}, "
                          f"{_lines_txt(*here)}", "none", new_path, here)
        before = self._find(old, path, sym)
        if before is not None:
            old_text = before.text
        elif span is not None:
            old_text = "".join(self.lines(old)[span[0] - 1:span[1]])
        else:
            return result("unverifiable", "symbol_unknown",
                          f"Symbol {sym} is not found in {path} at commit {c7}", "medium",
                          new_path, here)
        if _same(split_lines(old_text), split_lines(now.text)):
            if code is None:
                was = (before.start_line, before.end_line) if before is not None else span
                code = "unchanged" if was == here else "shifted"
            return result("valid", code, f"Symbol {sym} unchanged in {new_path}, "
                          f"{_lines_txt(*here)}", "none", new_path, here)
        return result("changed", "symbol_changed", f"Grounding symbol {sym} changed since {c7}",
                      "medium", new_path, here)

    def _check_edge(self, ev, new, new_path, span, mapped, result) -> EvidenceCheck:
        caller, target, c7 = ev.symbol, ev.target, _short(ev.commit_sha)
        edge = f"{caller} CALLS {target}"
        if self._find(new, new_path, caller) is None:
            return result("deleted", "referenced_symbol_deleted",
                          f"Caller {caller} no longer exists in {new_path}, so the edge {edge} "
                          f"is gone (since {c7})", "high")
        sites = self.symbols.call_sites(new.text, new_path, caller, key=new.oid)
        lines = [line for name, line in sites if _calls(name, target)]
        if not lines:
            return result("changed", "edge_removed",
                          f"{caller} no longer calls {target} in {new_path} (edge {edge} "
                          f"removed since {c7})", "medium", new_path)
        if mapped is not None and not mapped.touched:
            where = (mapped.start, mapped.end)
        else:  # the recorded lines changed: point at the first call of the target
            where = (lines[0], lines[0])
        code = "renamed" if new_path != ev.path else ("unchanged" if where == span else "shifted")
        return result("valid", code, f"{caller} still calls {target} in {new_path}, "
                      f"{_lines_txt(*where)}", "none", new_path, where)

    # -- policies -----------------------------------------------------------------------------

    def policy_reasons(self, memory_id: str, policies: Sequence[Mapping[str, Any]],
                       evs: list[EvidenceRef]) -> list[tuple[str, str, str]]:
        """(reason_code, reason, severity) of each firing policy, in policy order."""
        out: list[tuple[str, str, str]] = []
        files = sorted({(e.commit_sha, e.path) for e in evs if e.path and e.commit_sha
                        and self.diffs.get(e.commit_sha) is not None})
        commits = sorted({rev for rev, _ in files})
        for policy in policies or ():
            if not isinstance(policy, Mapping):
                continue
            for key, value in policy.items():
                if key not in _POLICY_KEYS or not isinstance(value, str) or not value.strip():
                    continue
                value = value.strip()
                if key in ("fileChanged", "docSuperseded"):
                    revs = sorted({rev for rev, p in files if p == value}) or commits
                    for rev in revs:
                        hit = (self._file_policy if key == "fileChanged" else self._doc_policy)(rev, value)
                        if hit:
                            out.append(hit)
                            break
                elif key == "symbolChanged":
                    hit = self._symbol_policy(value, files)
                    if hit:
                        out.append(hit)
                else:
                    hit = self._edge_policy(value, files)
                    if hit:
                        out.append(hit)
        return out

    def _file_policy(self, rev: str, path: str):
        st, c7 = self.state(rev, path), _short(rev)
        if st.kind == "deleted":
            return ("policy_file_changed", f"Policy fileChanged: {path} was deleted since {c7}", "high")
        if st.kind == "renamed":
            return ("policy_file_changed", f"Policy fileChanged: {path} was renamed to "
                    f"{st.new_path} since {c7}", "medium")
        if st.kind == "modified":
            return ("policy_file_changed", f"Policy fileChanged: {path} changed since {c7}", "medium")
        if st.kind == "added":
            return ("policy_file_changed", f"Policy fileChanged: {path} was added after {c7}", "medium")
        return None

    def _doc_policy(self, rev: str, path: str):
        st, c7 = self.state(rev, path), _short(rev)
        if st.kind == "deleted":
            return ("policy_doc_superseded", f"Policy docSuperseded: {path} was deleted since {c7}",
                    "high")
        if st.kind in ("modified", "renamed"):
            old, new = self.blob(st.old_key), self.blob(st.new_key)
            if old is not None and new is not None and "superseded" in new.text.lower() \
                    and "superseded" not in old.text.lower():
                return ("policy_doc_superseded", f"Policy docSuperseded: {st.new_path} is marked "
                        f"superseded since {c7}", "medium")
        return None

    def _symbol_policy(self, name: str, files: list[tuple[str, str]]):
        for rev, path in files:
            if not language_for(path):
                continue
            st = self.state(rev, path)
            old = self.blob(st.old_key)
            if old is None or self._find(old, path, name) is None:
                continue
            c7 = _short(rev)
            new = self.blob(st.new_key)
            now = self._find(new, st.new_path, name) if new is not None else None
            if now is None:
                return ("policy_symbol_changed", f"Policy symbolChanged: symbol {name} was "
                        f"deleted since {c7}", "high")
            if not _same(split_lines(self._find(old, path, name).text), split_lines(now.text)):
                return ("policy_symbol_changed", f"Policy symbolChanged: symbol {name} changed "
                        f"since {c7}", "medium")
            return None
        return None

    def _edge_policy(self, spec: str, files: list[tuple[str, str]]):
        parts = spec.replace(" calls ", " CALLS ").split(" CALLS ")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            return None
        caller, target = parts[0].strip(), parts[1].strip()
        for rev, path in files:
            if not language_for(path):
                continue
            st = self.state(rev, path)
            old = self.blob(st.old_key)
            if old is None or self._find(old, path, caller) is None:
                continue
            c7 = _short(rev)
            new = self.blob(st.new_key)
            if new is None or self._find(new, st.new_path, caller) is None:
                return ("policy_edge_removed", f"Policy edgeRemoved: caller {caller} was deleted "
                        f"since {c7}, so {spec} is gone", "high")
            names = self.symbols.calls_in(new.text, st.new_path, caller, key=new.oid)
            if not any(_calls(n, target) for n in names):
                return ("policy_edge_removed", f"Policy edgeRemoved: {caller} no longer calls "
                        f"{target} (since {c7})", "medium")
            return None
        return None


def _superseded(text: str) -> bool:
    """Whether a document says it is superseded (an ADR status line, a banner)."""
    return "superseded" in text.lower()


def _calls(name: str, target: str) -> bool:
    method = target.rsplit(".", 1)[-1]
    return name in (method, target, f"new {method}", f"new {target}")


def _same(a: Sequence[str], b: Sequence[str]) -> bool:
    if len(a) != len(b):
        return False
    return all(x.rstrip("\n") == y.rstrip("\n") for x, y in zip(a, b))


def _hash_ok(recorded: str, lines: Sequence[str]) -> bool:
    recorded = recorded.strip().lower()
    if span_hash(lines) == recorded:
        return True
    # a last line without "\n" (file without final newline) hashed as its exact bytes
    exact = "sha256:" + hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()
    return exact == recorded


def revalidate(evidence: Iterable[EvidenceRef], policies: Mapping[str, Sequence[Mapping[str, Any]]] | None,
               repo: GitRepo, *, symbols: SymbolIndex | None = None,
               memory_ids: Iterable[str] | None = None, hunks: str = "git") -> RevalidationResult:
    """Check ``evidence`` against HEAD of ``repo`` and decide per memory.

    ``evidence``: :class:`EvidenceRef` rows of any number of memories. ``policies``: per
    memory id, its invalidation policy, a list of one-key mappings (``symbolChanged: X``,
    ``fileChanged: PATH``, ``edgeRemoved: "A CALLS B"``, ``docSuperseded: PATH``; other keys
    are ignored). ``memory_ids``: memories to give a verdict even without evidence (a
    memory appears when it has evidence, a policy, or is listed). ``symbols``: a parse cache
    to reuse across runs (default: a fresh one). ``hunks``: ``"git"`` (zero-context hunks
    from ``git diff-tree -U0``, see :meth:`GitRepo.diff_many`) or ``"python"`` (no hunk
    processes: the same hunks computed with difflib from the blobs read anyway; faster on
    very large runs, and git's and difflib's hunks can differ only where a change can be
    aligned in more than one way).

    Returns a :class:`RevalidationResult` (checks sorted by memory and evidence id, verdicts by
    memory id). Unknown commits give ``unverifiable`` evidence, never an exception; raises
    :class:`memtui.sources.gitdiff.GitError` only when the checkout itself is unusable (not a
    git repository, no HEAD, git missing).
    """
    evs = sorted(evidence, key=lambda e: (e.memory_id, _eid_key(e.evidence_id)))
    policies = dict(policies or {})
    engine = _Engine(repo, symbols)
    processes_before = repo.git_processes
    parses_before = engine.symbols.parses
    engine.head = head = repo.head()

    by_memory: dict[str, list[EvidenceRef]] = {}
    for e in evs:
        by_memory.setdefault(e.memory_id, []).append(e)
    all_memories = sorted(set(by_memory) | set(policies) | set(memory_ids or ()))

    def made(ev, status, code, reason, severity, path=None, span=None, moved_in=None,
             renamed_to=None) -> EvidenceCheck:
        start, end = span if span else (None, None)
        return EvidenceCheck(ev.evidence_id, ev.memory_id, status, path, start, end, head, code, reason,
                             severity, moved_in, renamed_to)

    # named references (existence and location) and rows no git command may see (issue 8)
    fixed: dict[Any, EvidenceCheck] = {}
    named = [e for e in evs if is_named_reference(e) or is_example(e)]
    named_ids = {e.evidence_id for e in named}
    spans: list[EvidenceRef] = []
    for e in evs:
        if e.evidence_id in named_ids:
            continue
        if e.path and e.commit_sha and safe_repo_path(e.path) != e.path.removeprefix("./"):
            fixed[e.evidence_id] = made(e, "unverifiable", "bad_path",
                                        f"Evidence path {e.path!r} cannot name a file inside the repository",
                                        "medium")
            continue
        spans.append(e)
    history = History(repo, head)
    if named:
        fixed.update(check_references(named, repo, head, history, made))
    # a doc or ADR without a commit: does the document exist at HEAD? (issue 21, item 3)
    docs = [(e, p) for e in spans if not e.commit_sha and (p := doc_reference_path(e.type, e.path, e.ref))]
    if docs:
        sizes = repo.blob_sizes(head, sorted({p for _, p in docs}))
        for e, p in docs:
            if sizes.get(p) is not None:
                fixed[e.evidence_id] = made(e, "valid", "exists", f"{e.type} {p} exists at HEAD", "none", p)
            else:
                fixed[e.evidence_id] = made(e, "unverifiable", "doc_missing",
                                            f"{e.type} {p} does not exist at HEAD {_short(head)}", "high")

    # 1. one diff per distinct commit, hunks only for the paths evidence and policies name
    wanted: dict[str, set[str]] = {}
    for e in spans:
        if e.path and e.commit_sha:
            wanted.setdefault(e.commit_sha, set()).add(e.path)
    for mid in all_memories:
        mem_commits = sorted({e.commit_sha for e in by_memory.get(mid, ()) if e.path and e.commit_sha
                              and e.commit_sha in wanted})
        for policy in policies.get(mid) or ():
            if isinstance(policy, Mapping):
                for key in ("fileChanged", "docSuperseded"):
                    p = policy.get(key)
                    if isinstance(p, str) and safe_repo_path(p.strip()):
                        for rev in mem_commits:
                            wanted[rev].add(p.strip())
    if hunks not in ("git", "python"):
        raise ValueError(f"hunks must be 'git' or 'python', not {hunks!r}")
    engine.diffs, engine.failures = _diffs(repo, head, wanted, hunks)

    # 2. every blob any check needs, in one cat-file --batch
    needed: set[Any] = set()
    for rev, paths in wanted.items():
        for p in paths:
            st = engine.state(rev, p)
            if st.kind in ("unchanged", "modified", "renamed"):
                needed.add(st.old_key)
                needed.add(st.new_key)
    needed.discard(None)
    engine.blobs = repo.read_blobs(needed)

    # 3. evidence checks, then verdicts; one row failing never stops the others
    checks = []
    for e in evs:
        if e.evidence_id in fixed:
            checks.append(fixed[e.evidence_id])
            continue
        try:
            checks.append(engine.check(e))
        except Exception as exc:  # noqa: BLE001 - isolation is the point (issue 8, item 6)
            checks.append(made(e, "unverifiable", "check_failed", f"{e.path} could not be checked: {exc}",
                               "medium"))
    checks_by_memory: dict[str, list[tuple[EvidenceRef, EvidenceCheck]]] = {}
    for e, c in zip(evs, checks):
        checks_by_memory.setdefault(e.memory_id, []).append((e, c))
    verdicts = []
    for mid in all_memories:
        try:
            hits = engine.policy_reasons(mid, policies.get(mid) or [], by_memory.get(mid, []))
        except Exception as exc:  # noqa: BLE001
            hits = [("policy_unverifiable", f"Invalidation policy could not be checked: {exc}", "medium")]
        verdicts.append(_verdict(mid, checks_by_memory.get(mid, []), hits, head))
    stats = {
        "evidence": len(evs),
        "memories": len(all_memories),
        "commits": len(engine.diffs),
        "unknown_commits": sum(1 for d in engine.diffs.values() if d is None),
        "blobs": sum(1 for b in engine.blobs.values() if b is not None),
        "parses": engine.symbols.parses - parses_before,
        "git_processes": repo.git_processes - processes_before,
        "named_references": len(named),
    }
    return RevalidationResult(head=head, checks=checks, verdicts=verdicts, stats=stats,
                              unreadable=list(dict.fromkeys(engine.failures + history.errors)))


def _diffs(repo: GitRepo, head: str, wanted: dict[str, set[str]], hunks: str):
    """Per commit, its CommitDiff (None: unknown or unreadable commit), and the git errors met.

    Batched first; when git cannot read an object (partial clone) the hunks are computed in
    Python, then each commit is diffed alone so that one unreadable commit only makes its own
    evidence unverifiable."""
    paths = {rev: sorted(ps) for rev, ps in wanted.items()}
    errors: list[str] = []
    differs = [repo.diff_many, repo.name_status] if hunks == "git" else [repo.name_status]
    for differ in differs:
        try:
            return differ(sorted(wanted), head, paths), errors
        except GitError as exc:
            errors.append(str(exc))
    out: dict[str, CommitDiff | None] = {}
    for rev in sorted(wanted):
        try:
            out.update(repo.name_status([rev], head, {rev: paths[rev]}))
        except GitError as exc:
            errors.append(str(exc))
            out[rev] = None
    return out, errors


def _verdict(memory_id: str, pairs: list[tuple[EvidenceRef, EvidenceCheck]],
             policy_hits: list[tuple[str, str, str]], head: str) -> MemoryVerdict:
    checks = [c for _, c in pairs]
    checkable = [c for c in checks if c.status not in ("unchecked", "unresolvable")]
    notes = [c for c in checks if c.status == "unresolvable"]
    soft = any(e.type in _SOFT_TYPES for e, _ in pairs) or len(checkable) != len(checks)
    problems = [c for c in checkable if c.status in ("changed", "deleted", "unverifiable")]
    reasons: list[str] = []
    codes: list[str] = []
    severity = "none"
    for c in problems:
        reasons.append(c.reason)
        codes.append(c.reason_code)
        severity = max(severity, c.severity, key=_RANK.__getitem__)
    for code, reason, sev in policy_hits:
        reasons.append(reason)
        codes.append(code)
        severity = max(severity, sev, key=_RANK.__getitem__)
    if checkable and not soft and all(c.status == "deleted" for c in checkable):
        outcome, lead = "invalidate", "all_evidence_deleted"
        reasons.insert(0, "All evidence of the memory was deleted")
        severity = "high"
    elif reasons:
        outcome, lead = "needs_review", None
    else:
        outcome, lead = "keep", None
        for c in notes:  # never existed: a note for the report, not a review (issue 8, item 2)
            reasons.append(c.reason)
            codes.append(c.reason_code)
            severity = "low"
    unique_reasons = list(dict.fromkeys(reasons))
    ordered = sorted(set(codes) - {lead}) if lead else sorted(set(codes))
    current = sorted({f"{_name(c.current_path)}@{_short(head)}" for c in checkable
                      if c.status in ("valid", "changed") and c.current_path})
    return MemoryVerdict(memory_id, outcome, unique_reasons,
                         ([lead] if lead else []) + ordered, severity, current)
