"""Symbol definitions at a commit, kept between processes (issue 22, item 3).

What :meth:`memtui.sources.symbol_index.RepoSymbolIndex.definitions` finds for a name at a commit
(full sha) depends only on that commit's objects and memtui's code, so it is kept in a
:class:`~memtui.sources.diskcache.DiskCache` (kind ``defs``, one entry per commit holding every name
asked there) and read back instead of grepping and parsing again. Installed for a block of code with
:func:`using`; the index stores only complete answers (no candidate file left out by its limits, no
blob it could not read).

What one file version defines of a name depends only on its blob, its path and the code, so that is
kept too (kind ``blobs``: one entry per process, the files its lookups met; the last
:attr:`SymbolStore.blob_runs` are read back): at a new commit only the files that changed are parsed.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

from memtui.sources.diskcache import DiskCache, code_fingerprint, key_of

__all__ = ["SymbolStore", "using"]


class _Touched(dict):
    """(blob id, path) -> {name: definitions}; remembers the keys looked at (what a run keeps)."""

    def __init__(self, *a) -> None:
        super().__init__(*a)
        self.touched: set = set()

    def setdefault(self, key, default=None):
        self.touched.add(key)
        return super().setdefault(key, default)


class SymbolStore:
    """Definitions by ``(commit, name)``: a memory layer over ``cache`` (None: memory only). ``hits`` /
    ``misses``: names asked that it had / did not have (then looked up in git)."""

    def __init__(self, cache: DiskCache | None) -> None:
        self.cache = cache
        self._mem: dict[str, dict[str, list]] = {}
        self._lock = threading.Lock()
        self._blobs: _Touched | None = None
        self.hits = 0
        self.misses = 0

    #: how many earlier runs' per-file answers are read back
    blob_runs = 2

    def _key(self, commit: str) -> str:
        return key_of("defs-v1", code_fingerprint(), commit)

    def _load(self, commit: str) -> dict[str, list]:
        if commit not in self._mem:
            got = self.cache.get("defs", self._key(commit)) if self.cache is not None else None
            self._mem[commit] = got if isinstance(got, dict) else {}
        return self._mem[commit]

    def get(self, commit: str, names: Iterable[str]) -> dict[str, list[tuple[str, str, int, int]]]:
        """The names known at ``commit``: name -> [(qualified name, path, start, end)] (maybe empty)."""
        names = list(names)
        with self._lock:
            known = self._load(commit)
            out = {n: [tuple(d) for d in known[n]] for n in names if n in known}
            self.hits += len(out)
            self.misses += len(names) - len(out)
            return out

    def put(self, commit: str, found: dict[str, list[tuple[str, str, int, int]]]) -> None:
        """Record complete answers for ``found``'s names at ``commit``."""
        if not found:
            return
        with self._lock:
            known = self._load(commit)
            if self.cache is not None:  # another process may have added names meanwhile
                got = self.cache.get("defs", self._key(commit))
                if isinstance(got, dict):
                    known.update({k: v for k, v in got.items() if k not in known})
            known.update({n: [list(d) for d in defs] for n, defs in found.items()})
            if self.cache is not None:
                self.cache.put("defs", self._key(commit), known)

    # -- per file version ---------------------------------------------------------------------------

    def _runs_key(self) -> str:
        return key_of("blobs-runs-v2", code_fingerprint())

    def blobs(self) -> dict:
        """The per-file answers of earlier runs, (blob id, path) -> {name: ((qualified name, start,
        end), ...)}; the symbol index reads and fills it."""
        with self._lock:
            if self._blobs is None:
                self._blobs = _Touched()
                runs = self.cache.get("blobs", self._runs_key()) if self.cache is not None else None
                for run in (runs if isinstance(runs, list) else [])[:self.blob_runs]:
                    got = self.cache.get("blobs", run) if isinstance(run, str) else None
                    try:
                        self._merge(got["names"], got["blobs"])
                    except (KeyError, TypeError, ValueError, IndexError):
                        continue  # not what flush writes: ignored
            return self._blobs

    def _merge(self, name_sets: list, blobs: dict) -> None:
        for k, v in blobs.items():
            idx, defs = (v, {}) if isinstance(v, int) else v
            oid, _, path = k.partition("\0")
            entry = dict.fromkeys(name_sets[idx], ())
            entry.update({n: tuple(tuple(d) for d in found) for n, found in defs.items()})
            old = self._blobs.get((oid, path))
            if old is None:
                self._blobs[(oid, path)] = entry
            else:
                for n, found in entry.items():
                    old.setdefault(n, found)

    def flush(self) -> None:
        """Keep the per-file answers this run looked at, as the newest run: ``names``, the sets of names
        asked (each file refers to one by its index) and ``blobs``, ``"BLOB\\0PATH"`` -> that index, or
        [index, {name: [[qualified name, start, end], ...]}] for the names it defines."""
        with self._lock:
            if self.cache is None or not self._blobs or not self._blobs.touched:
                return
            sets: dict[tuple, int] = {}
            blobs: dict[str, Any] = {}
            for oid, path in sorted(self._blobs.touched):
                entry = self._blobs[(oid, path)]
                idx = sets.setdefault(tuple(sorted(entry)), len(sets))
                defs = {n: [list(d) for d in found] for n, found in entry.items() if found}
                blobs[f"{oid}\0{path}"] = [idx, defs] if defs else idx
            run = key_of("blobs-run-v2", code_fingerprint(), sorted(blobs))
            if not self.cache.put("blobs", run, {"names": [list(t) for t in sets], "blobs": blobs}):
                return
            runs = self.cache.get("blobs", self._runs_key())
            runs = [r for r in (runs if isinstance(runs, list) else []) if r != run]
            self.cache.put("blobs", self._runs_key(), [run] + runs[:self.blob_runs * 4])


@contextmanager
def using(store: SymbolStore | None) -> Iterator[SymbolStore | None]:
    """Make every :class:`~memtui.sources.symbol_index.RepoSymbolIndex` of the process read and fill
    ``store`` inside the block (None: leave things as they are)."""
    from memtui.sources import symbol_index

    before = symbol_index.STORE
    if store is not None:
        symbol_index.STORE = store
    try:
        yield store
    finally:
        symbol_index.STORE = before
        if store is not None:
            store.flush()
