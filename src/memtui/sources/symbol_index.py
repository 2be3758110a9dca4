"""Repository-wide symbol definitions at a revision, found lazily with ``git grep`` + tree-sitter.

Only files of the languages :mod:`memtui.sources.symbols` parses (Python, Java, TS/TSX,
JS/MJS/CJS/JSX, Go, Rust, Ruby, Tcl procs, Kotlin, C#) are considered, and only definitions count: a name that is merely
mentioned (comment, string, Markdown) is not found. A whole lookup costs a few git processes:
``git grep`` (one per ~200 distinct words) to list candidate files and one ``cat-file --batch``
for their texts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from memtui.sources.gitdiff import GitError, GitRepo
from memtui.sources.symbols import SymbolIndex, _EXTENSIONS, language_for

__all__ = ["Definition", "RepoSymbolIndex", "SOURCE_PATHSPECS"]

#: git pathspecs of the supported source files (``*.py`` matches at any depth).
SOURCE_PATHSPECS: tuple[str, ...] = tuple(f"*{ext}" for ext in sorted(_EXTENSIONS))


@dataclass(frozen=True)
class Definition:
    """One definition: ``name`` its qualified name in its file (``"Router.route"``), ``path``
    repository-relative, ``start_line``/``end_line`` 1-based inclusive."""

    name: str
    path: str
    start_line: int
    end_line: int


#: parses shared by every index of the process (keys are blob ids, so sharing is safe): an import,
#: then a revalidation at the same HEAD (``memtui lint``), parse each file once.
_SHARED = SymbolIndex(maxsize=2048)

#: answers per (commit, name) kept between processes while a caller installed one
#: (:func:`memtui.sources.symbol_store.using`); only full commit ids are looked up there
STORE = None
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class RepoSymbolIndex:
    """Definitions at one revision of a repository, found lazily: ``git grep -l -w -F`` at the
    revision narrows the files that can define the wanted names, then those are parsed.

    ``repo``: the repository; ``rev``: any revision git accepts (sha, ``HEAD``, branch);
    ``symbols``: a parse cache (blob ids are the cache keys); the process-wide one otherwise.
    Limits per :meth:`definitions` call: at most ``max_files`` (3,000) candidate files are
    parsed (the first ones by path; the rest are ignored) and files larger than ``max_bytes``
    (1 MB) are skipped. Unknown revisions and unreadable blobs (partial clones, missing
    objects) give no definitions; nothing raises for them. Answers are memoized per name.
    """

    max_files = 3000
    max_bytes = 1 << 20
    words_per_process = 200

    def __init__(self, repo: GitRepo, rev: str, symbols: SymbolIndex | None = None) -> None:
        self.repo = repo
        self.rev = rev
        self.symbols = symbols if symbols is not None else _SHARED
        self._memo: dict[str, list[Definition]] = {}

    @staticmethod
    def _parts(name: str) -> tuple[str, ...]:
        return tuple(p for p in (name or "").strip().split(".") if p)

    def definitions(self, names: Iterable[str]) -> dict[str, list[Definition]]:
        """For each dotted name (``"Router.route"``, ``"RuleRegistry"``, ``"parse_markdown"``;
        a trailing ``()`` is the caller's to strip), every definition of it at ``rev``, sorted
        by ``(path, start_line)``; names defined nowhere map to ``[]``. A name matches a
        definition whose qualified name ends with it (``route`` finds ``Router.route`` and
        ``Other.route``, ``Router.route`` only the former). Git processes: one ``git grep`` per
        ~200 distinct last name parts, one ``cat-file --batch``; none when all are memoized."""
        names = list(dict.fromkeys(names))
        todo = [n for n in names if n not in self._memo]
        store = STORE if STORE is not None and _FULL_SHA.fullmatch(self.rev) else None
        if todo and store is not None:
            for n, defs in store.get(self.rev, todo).items():
                self._memo[n] = [Definition(*d) for d in defs]
            todo = [n for n in todo if n not in self._memo]
        if todo:
            incomplete: list[bool] = []
            found = self._lookup(todo, incomplete, store.blobs() if store is not None else None)
            self._memo.update(found)
            if store is not None and not incomplete:
                store.put(self.rev, {n: [(d.name, d.path, d.start_line, d.end_line) for d in defs]
                                     for n, defs in found.items()})
        return {n: list(self._memo[n]) for n in names}

    def _lookup(self, names: list[str], incomplete: list[bool] | None = None,
                per_blob: dict | None = None) -> dict[str, list[Definition]]:
        """``incomplete`` gets an entry when the answer may lack definitions (a limit or an error).
        ``per_blob``: what a candidate file defines of each name, by (blob id, path) -> {name:
        [(qualified name, start, end)]}, read (those names are not parsed for again) and filled in."""
        incomplete = [] if incomplete is None else incomplete
        out: dict[str, list[Definition]] = {n: [] for n in names}
        by_word: dict[str, list[str]] = {}
        for n in names:
            parts = self._parts(n)
            if parts:
                by_word.setdefault(parts[-1], []).append(n)
        if not by_word:
            return out
        words = sorted(by_word)
        paths: set[str] = set()
        try:
            for i in range(0, len(words), self.words_per_process):
                paths |= self.repo.grep_files(self.rev, words[i:i + self.words_per_process],
                                              SOURCE_PATHSPECS)
        except GitError:
            incomplete.append(True)
            return out
        paths = sorted(p for p in paths if language_for(p))
        if len(paths) > self.max_files:
            incomplete.append(True)  # which files count depends on the other names asked with these
            paths = paths[:self.max_files]
        if not paths:
            return out
        try:
            blobs = self.repo.read_blobs((self.rev, p) for p in paths)
        except GitError:
            incomplete.append(True)
            return out
        for path in paths:
            blob = blobs.get((self.rev, path))
            if blob is None:
                incomplete.append(True)
                continue
            if blob.binary or len(blob.text) > self.max_bytes:
                continue
            known = per_blob.setdefault((blob.oid, path), {}) if per_blob is not None else {}
            ask = {w: [n for n in ns if n not in known] for w, ns in by_word.items()}
            ask = {w: ns for w, ns in ask.items() if ns}
            if ask:
                here = dict.fromkeys((n for ns in ask.values() for n in ns), ())
                for n in self._names_in(blob.text, path, ask):
                    here[n] = tuple((span.name, span.start_line, span.end_line)
                                    for span in self.symbols.find_all(blob.text, path, n, key=blob.oid))
                known.update(here)
            for ns in by_word.values():
                for n in ns:
                    out[n] += [Definition(q, path, start, end) for q, start, end in known.get(n, ())]
        for defs in out.values():
            defs.sort(key=lambda d: (d.path, d.start_line, d.name))
        return out

    def _names_in(self, text: str, path: str, by_word: dict[str, list[str]]) -> list[str]:
        """The wanted names that can be defined in ``text``: every part occurs in it (a substring test;
        the parse decides), the first part possibly only in ``path`` (a module: ``tools.BASH`` in
        ``tools.py``). A file no name survives is not parsed."""
        out = []
        for w, names in by_word.items():
            if w not in text:
                continue
            for n in names:
                parts = self._parts(n)
                if all(p in text for p in parts[1:-1]) and (parts[0] in text or parts[0] in path):
                    out.append(n)
        return out
