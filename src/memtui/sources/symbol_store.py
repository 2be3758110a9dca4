"""Symbol definitions at a commit, kept between processes (issue 22, item 3).

What :meth:`memtui.sources.symbol_index.RepoSymbolIndex.definitions` finds for a name at a commit
(full sha) depends only on that commit's objects and memtui's code, so it is kept in a
:class:`~memtui.sources.diskcache.DiskCache` (kind ``defs``, one entry per commit holding every name
asked there) and read back instead of grepping and parsing again. Installed for a block of code with
:func:`using`; the index stores only complete answers (no candidate file left out by its limits, no
blob it could not read).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterable, Iterator

from memtui.sources.diskcache import DiskCache, code_fingerprint, key_of

__all__ = ["SymbolStore", "using"]


class SymbolStore:
    """Definitions by ``(commit, name)``: a memory layer over ``cache`` (None: memory only). ``hits`` /
    ``misses``: names asked that it had / did not have (then looked up in git)."""

    def __init__(self, cache: DiskCache | None) -> None:
        self.cache = cache
        self._mem: dict[str, dict[str, list]] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

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
