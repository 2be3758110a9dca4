"""Answers kept between processes, under the repository's git dir (issue 22, item 3).

Only answers that are pure functions of their key are kept: the key names every input (commits by
full sha, file contents by hash) and :func:`code_fingerprint`, so a changed or upgraded memtui never
reads an answer an older one wrote. Nothing is ever written inside the working tree.

Where: ``<git common dir>/memtui/cache/`` (``.git/memtui/cache`` in a plain clone; shared by the
worktrees of one repository); ``$MEMTUI_CACHE_DIR/<repository's hash>/`` when that variable is set;
no cache at all when ``$MEMTUI_CACHE`` is ``0``/``off``/``no``/``false``. Entries are zlib-compressed
JSON files written atomically (``os.replace``); an unreadable or corrupt entry is a miss; a folder
that cannot be written means nothing is kept (never an error). At most :attr:`DiskCache.max_entries`
files are kept per kind, the least recently written removed first.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

__all__ = ["DiskCache", "code_fingerprint", "key_of", "file_digest", "for_checkout"]

_OFF = ("0", "off", "no", "false")
_fingerprint: str | None = None


#: the parts of the memtui package whose code decides the answers kept (what lint and the symbol
#: index run: the importers' readers and resolvers, revalidation, git sources, domain helpers)
CODE_PARTS = ("importers", "revalidation", "sources", "domain", "maintenance/lint.py", "text.py")


def code_fingerprint() -> str:
    """A hash of the interpreter version, the size and mtime of every file of :data:`CODE_PARTS` and
    the installed tree-sitter grammars (their dist-info folders): what an answer depends on besides
    its inputs. Computed once per process (a few ms)."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(sys.version.encode())
        pkg = Path(__file__).resolve().parents[1]
        for part in CODE_PARTS:
            top = pkg / part
            walk = [(str(top.parent), [], [top.name])] if top.is_file() else os.walk(top)
            for dirpath, dirnames, filenames in walk:
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for name in sorted(filenames):
                    if name.endswith((".py", ".scm", ".json", ".yaml")):
                        path = os.path.join(dirpath, name)
                        st = os.stat(path)
                        h.update(f"{os.path.relpath(path, pkg)}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
        try:
            spec = importlib.util.find_spec("tree_sitter")  # where it is installed, without importing it
            site = Path(spec.origin).resolve().parents[1] if spec and spec.origin else pkg
            h.update("\n".join(sorted(n for n in os.listdir(site) if n.startswith("tree_sitter")
                                      and n.endswith(".dist-info"))).encode())
        except (ImportError, OSError, ValueError):
            pass
        _fingerprint = h.hexdigest()[:16]
    return _fingerprint


def key_of(*parts: Any) -> str:
    """A hex key for JSON-serialisable ``parts``."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:40]


def file_digest(path: Path | str) -> str | None:
    """SHA-256 of a file's bytes, or None when it cannot be read."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


class DiskCache:
    """Compressed JSON values by ``(kind, key)`` under ``root`` (see the module doc)."""

    max_entries = 256

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def for_repo(cls, git_common_dir: Path | str | None) -> "DiskCache | None":
        """The cache of the repository whose git dir (``git rev-parse --git-common-dir``, absolute) is
        ``git_common_dir``; None when caching is off or there is no git dir."""
        if os.environ.get("MEMTUI_CACHE", "").strip().lower() in _OFF or not git_common_dir:
            return None
        base = os.environ.get("MEMTUI_CACHE_DIR", "").strip()
        if base:
            tag = hashlib.sha256(str(Path(git_common_dir).resolve()).encode()).hexdigest()[:16]
            return cls(Path(base) / tag)
        return cls(Path(git_common_dir) / "memtui" / "cache")

    def _path(self, kind: str, key: str) -> Path:
        return self.root / kind / f"{key}.json.z"

    def get(self, kind: str, key: str) -> Any | None:
        """The value stored under ``(kind, key)``, or None (missing, unreadable, corrupt)."""
        try:
            return json.loads(zlib.decompress(self._path(kind, key).read_bytes()))
        except (OSError, ValueError, zlib.error):
            return None

    def put(self, kind: str, key: str, value: Any) -> bool:
        """Store ``value`` (JSON-serialisable); False when it could not be written."""
        folder = self.root / kind
        try:
            folder.mkdir(parents=True, exist_ok=True)
            data = zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 3)
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, self._path(kind, key))
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except (OSError, TypeError, ValueError):
            return False
        self._prune(folder)
        return True

    def _prune(self, folder: Path) -> None:
        """Remove the oldest entries beyond :attr:`max_entries` (another process may be pruning too)."""
        try:
            entries = [(e.stat().st_mtime_ns, e.path) for e in os.scandir(folder) if e.name.endswith(".json.z")]
        except OSError:
            return
        entries.sort()
        for _, path in entries[:max(0, len(entries) - self.max_entries)]:
            try:
                os.unlink(path)
            except OSError:
                pass


def for_checkout(repo) -> DiskCache | None:
    """The cache of the repository ``repo`` (a :class:`~memtui.sources.gitdiff.GitRepo`) is in: None
    when caching is off, and for shallow or partial clones (their answers change when objects are
    fetched later, with HEAD unchanged). One ``git rev-parse`` process."""
    if os.environ.get("MEMTUI_CACHE", "").strip().lower() in _OFF:
        return None
    from memtui.sources.gitdiff import GitError  # noqa: PLC0415

    try:
        out = repo._run(["rev-parse", "--git-common-dir"]).decode("utf-8", "surrogateescape").strip()
    except GitError:
        return None
    if not out:
        return None
    git_dir = Path(out) if os.path.isabs(out) else Path(repo.checkout) / out
    try:
        if (git_dir / "shallow").exists():
            return None
        config = (git_dir / "config").read_text(encoding="utf-8", errors="replace").casefold()
    except OSError:
        return None
    if "partialclone" in config or "promisor" in config:
        return None
    return DiskCache.for_repo(git_dir.resolve())
